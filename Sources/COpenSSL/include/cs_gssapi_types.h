// The GSSAPI types (RFC 2744, MIT Kerberos layout) Countersign passes to libgssapi_krb5,
// which it loads at run time with dlopen: declared here, not included from <gssapi/gssapi.h>,
// so building needs no Kerberos headers and the binary links no Kerberos library.
#ifndef COUNTERSIGN_GSSAPI_TYPES_H
#define COUNTERSIGN_GSSAPI_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t cs_OM_uint32;
typedef struct { size_t length; void *value; } cs_gss_buffer_desc;
typedef struct { cs_OM_uint32 length; void *elements; } cs_gss_OID_desc;
typedef struct { size_t count; cs_gss_OID_desc *elements; } cs_gss_OID_set_desc;
typedef struct {
    cs_OM_uint32 initiator_addrtype;
    cs_gss_buffer_desc initiator_address;
    cs_OM_uint32 acceptor_addrtype;
    cs_gss_buffer_desc acceptor_address;
    cs_gss_buffer_desc application_data;
} cs_gss_channel_bindings_desc;
typedef struct { const char *key; const char *value; } cs_gss_key_value_element_desc;
typedef struct { cs_OM_uint32 count; cs_gss_key_value_element_desc *elements; } cs_gss_key_value_set_desc;

typedef cs_OM_uint32 (*cs_gss_import_name_fn)(cs_OM_uint32 *, cs_gss_buffer_desc *, cs_gss_OID_desc *, void **);
typedef cs_OM_uint32 (*cs_gss_release_name_fn)(cs_OM_uint32 *, void **);
typedef cs_OM_uint32 (*cs_gss_init_sec_context_fn)(cs_OM_uint32 *, void *, void **, void *, cs_gss_OID_desc *,
    cs_OM_uint32, cs_OM_uint32, cs_gss_channel_bindings_desc *, cs_gss_buffer_desc *, cs_gss_OID_desc **,
    cs_gss_buffer_desc *, cs_OM_uint32 *, cs_OM_uint32 *);
typedef cs_OM_uint32 (*cs_gss_delete_sec_context_fn)(cs_OM_uint32 *, void **, cs_gss_buffer_desc *);
typedef cs_OM_uint32 (*cs_gss_release_buffer_fn)(cs_OM_uint32 *, cs_gss_buffer_desc *);
typedef cs_OM_uint32 (*cs_gss_acquire_cred_from_fn)(cs_OM_uint32 *, void *, cs_OM_uint32, cs_gss_OID_set_desc *, int,
    const cs_gss_key_value_set_desc *, void **, cs_gss_OID_set_desc **, cs_OM_uint32 *);
typedef cs_OM_uint32 (*cs_gss_acquire_cred_with_password_fn)(cs_OM_uint32 *, void *, cs_gss_buffer_desc *, cs_OM_uint32,
    cs_gss_OID_set_desc *, int, void **, cs_gss_OID_set_desc **, cs_OM_uint32 *);
typedef cs_OM_uint32 (*cs_gss_release_cred_fn)(cs_OM_uint32 *, void **);
typedef cs_OM_uint32 (*cs_gss_display_status_fn)(cs_OM_uint32 *, cs_OM_uint32, int, cs_gss_OID_desc *, cs_OM_uint32 *,
    cs_gss_buffer_desc *);

#endif
