# Batsim 4.2.1 built from the vendored sources of ../shared/batsim, with the very script CI runs
# (`SKIP_PYBATSIM=1 bash build.sh`: Debian 12's SimGrid 3.32, Batsim compiled with meson, release build).
# The build context is that folder, not the repository:
#   docker build -f docker/batsim-from-source.Dockerfile -t batreplay-batsim:4.2.1 ../shared/batsim
# then use it as the base of the compose file's `batsim` service:
#   BATSIM_IMAGE=batreplay-batsim:4.2.1 docker compose -f docker/compose.yaml build
FROM debian:bookworm
COPY . /tmp/batsim-src
RUN SKIP_PYBATSIM=1 bash /tmp/batsim-src/build.sh \
    && rm -rf /tmp/batsim-src /var/lib/apt/lists/* \
    && batsim --version
ENTRYPOINT ["batsim"]
