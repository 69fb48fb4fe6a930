# The same image as `make image` (scripts/build-image.py), built where a container daemon
# exists:  docker build -t countersign:0.1.0 .
# Stage 1 builds the release binary (Swift runtime linked statically) on Debian 12 and lays
# out the image's files with the same script and the same library closure (ldd); stage 2 is
# those files alone. Only the layering differs: the state directory is its own layer, since
# COPY cannot keep its owner otherwise.
ARG SWIFT_IMAGE=swift:6.3-bookworm
FROM ${SWIFT_IMAGE} AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libevent-dev libssl-dev pkg-config publicsuffix ca-certificates libgssapi-krb5-2 python3 binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN swift build -c release --static-swift-stdlib --scratch-path .build/static \
 && scripts/build-image.py .build/static/release/countersign --rootfs /rootfs \
 && mv /rootfs/var/lib/countersign /state

FROM scratch
COPY --from=build /rootfs/ /
COPY --from=build --chown=65532:65532 /state/ /var/lib/countersign/
USER 65532:65532
ENV PATH=/usr/bin:/bin
WORKDIR /
EXPOSE 3128 9901
STOPSIGNAL SIGTERM
ENTRYPOINT ["countersign", "run"]
