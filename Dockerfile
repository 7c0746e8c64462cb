# aiperf-node image, tagged aiperf-node:<version> (`aiperf-node --version`),
# e.g. `docker build -t aiperf-node:0.1.0 .`. k8s/deploy runs it as the operator.
FROM debian:12 AS build
WORKDIR /src
COPY tools/bootstrap tools/bootstrap
RUN apt-get update && tools/bootstrap && rm -rf /var/lib/apt/lists/*
COPY . .
RUN AIPERF_BUILD_DIR=/src/build tools/build aiperf-node \
 && strip build/tools/aiperf-node/aiperf-node

FROM debian:12-slim
# Only the shared libraries the binary loads (ldd), plus CA certificates for
# TLS to the API server.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libzmq5 libspdlog1.10 libfmt9 \
    libzstd1 libcaf-core0.17 libonig5 libicu72 libyaml-cpp0.7 libssl3 libjemalloc2 libstdc++6 \
    libgcc-s1 libc6 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/tools/aiperf-node/aiperf-node /usr/local/bin/aiperf-node
USER 1000:1000
ENTRYPOINT ["aiperf-node"]
