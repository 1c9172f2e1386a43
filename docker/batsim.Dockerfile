# Batsim itself: any image that provides the `batsim` executable of a 4.2.x release. The default is the Batsim
# project's published image (Docker Hub `oarteam/batsim`, whose entry point is `batsim`); give another one with
#   docker compose build --build-arg BATSIM_IMAGE=my/batsim:4.2.1 batsim     (or BATSIM_IMAGE=... in .env)
ARG BATSIM_IMAGE=oarteam/batsim:4.2.1
FROM ${BATSIM_IMAGE}
# Fails the build at once if the image has no `batsim` on its PATH; prints the version it has.
RUN ["batsim", "--version"]
ENTRYPOINT ["batsim"]
