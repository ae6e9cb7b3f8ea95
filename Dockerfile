# syntax=docker/dockerfile:1
# The jobtriage container image: one static binary on scratch, CA
# certificates for TLS to databases, Redis and notifiers, a non-root user.
#
#   docker build -t jobtriage .                       # from a clone: compiles in the source stage
#   docker run --rm jobtriage failed --dsn postgres://…
#
# The release build (.goreleaser.yaml, dockers_v2) passes BINARY_FROM=prebuilt
# and puts the binary it built for each platform at $TARGETPLATFORM/jobtriage.
ARG BINARY_FROM=source
ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS source
WORKDIR /src
COPY go.mod go.sum ./
COPY third_party/ third_party/
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
# CGO_ENABLED=0: modernc.org/sqlite is pure Go, so the binary needs no libc.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/jobtriage .

FROM scratch AS prebuilt
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/jobtriage /out/jobtriage

FROM ${BINARY_FROM} AS binary

FROM alpine:3.22 AS base
RUN apk add --no-cache ca-certificates \
 && mkdir -p /rootfs/etc/ssl/certs /rootfs/tmp /rootfs/home/jobtriage \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
 && echo 'jobtriage:x:65532:65532:jobtriage:/home/jobtriage:/sbin/nologin' > /rootfs/etc/passwd \
 && echo 'jobtriage:x:65532:' > /rootfs/etc/group \
 && chmod 1777 /rootfs/tmp \
 && chown 65532:65532 /rootfs/home/jobtriage

FROM scratch
COPY --from=base /rootfs/ /
COPY --from=binary /out/jobtriage /usr/bin/jobtriage
ENV HOME=/home/jobtriage TMPDIR=/tmp
USER 65532:65532
WORKDIR /home/jobtriage
ENTRYPOINT ["/usr/bin/jobtriage"]
CMD ["--help"]
