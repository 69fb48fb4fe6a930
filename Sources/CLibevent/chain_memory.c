#include "CLibevent.h"
#include <malloc.h>
#include <stdlib.h>

// libevent's memory, with its buffer chains kept for the next one on the same thread. Every
// evbuffer chain is a malloc of a power of two (1 KiB and up); a forwarded request takes four
// (a read on each side, a head written to each side) and frees them as they drain, and the two
// 8 KiB reads miss glibc's per-thread cache (it stops at 1 KiB) for its slower bins: some 900
// instructions a request. Here a freed block of a chain's size waits, a few per size on each
// thread (one worker each), for the next chain of that size: a pop and a push.
//
// Every block is glibc's own (what is kept was malloc'd and is freed with free when not
// kept), so memory libevent took before these functions were installed frees here, and
// memory taken here frees anywhere. A kept block is taken again whole, as malloc would have
// given it: what is read from it is only what is written to it.

/// Sizes kept: 1 KiB (`CS_KEPT_MIN`) doubling up to 16 KiB (a TLS read's chain).
#define CS_KEPT_CLASSES 5
#define CS_KEPT_MIN 1024
/// Blocks kept per size and thread: at most (1 + 2 + 4 + 8 + 16) KiB × 4 = 124 KiB a thread.
#define CS_KEPT_DEPTH 4

struct cs_kept_blocks {
    void *blocks[CS_KEPT_CLASSES][CS_KEPT_DEPTH];
    int count[CS_KEPT_CLASSES];
    int registered;     // the thread's exit frees them (`cs_kept_key`)
};

static __thread struct cs_kept_blocks cs_kept;
static pthread_key_t cs_kept_key;
static pthread_once_t cs_kept_once = PTHREAD_ONCE_INIT;

/// The class of a size that is exactly one kept (a chain's), or -1.
static int cs_class_of_request(size_t size) {
    if (size < CS_KEPT_MIN || (size & (size - 1)) != 0) return -1;
    int index = __builtin_ctzl(size) - __builtin_ctzl(CS_KEPT_MIN);
    return index < CS_KEPT_CLASSES ? index : -1;
}

/// The largest kept size a block of `usable` bytes serves, or -1.
static int cs_class_of_block(size_t usable) {
    if (usable < CS_KEPT_MIN) return -1;
    int index = (63 - __builtin_clzl(usable)) - __builtin_ctzl(CS_KEPT_MIN);
    return index < CS_KEPT_CLASSES ? index : -1;
}

static void cs_kept_release(void *unused) {
    (void)unused;
    for (int class = 0; class < CS_KEPT_CLASSES; class++) {
        while (cs_kept.count[class] > 0) free(cs_kept.blocks[class][--cs_kept.count[class]]);
    }
    cs_kept.registered = 0;
}

static void cs_kept_make_key(void) {
    pthread_key_create(&cs_kept_key, cs_kept_release);
}

static void *cs_chain_malloc(size_t size) {
    int class = cs_class_of_request(size);
    if (class >= 0 && cs_kept.count[class] > 0) return cs_kept.blocks[class][--cs_kept.count[class]];
    return malloc(size);
}

static void *cs_chain_realloc(void *block, size_t size) {
    return realloc(block, size);
}

static void cs_chain_free(void *block) {
    if (!block) return;
    int class = cs_class_of_block(malloc_usable_size(block));
    if (class < 0 || cs_kept.count[class] == CS_KEPT_DEPTH) {
        free(block);
        return;
    }
    if (!cs_kept.registered) {
        // A value that is not NULL, so the key's destructor runs when the thread exits.
        if (pthread_setspecific(cs_kept_key, &cs_kept) != 0) {
            free(block);
            return;
        }
        cs_kept.registered = 1;
    }
    cs_kept.blocks[class][cs_kept.count[class]++] = block;
}

static void cs_chain_memory_install_once(void) {
    cs_kept_make_key();
    event_set_mem_functions(cs_chain_malloc, cs_chain_realloc, cs_chain_free);
}

void cs_chain_memory_install(void) {
    pthread_once(&cs_kept_once, cs_chain_memory_install_once);
}

int cs_chain_memory_kept(void) {
    int total = 0;
    for (int class = 0; class < CS_KEPT_CLASSES; class++) total += cs_kept.count[class];
    return total;
}
