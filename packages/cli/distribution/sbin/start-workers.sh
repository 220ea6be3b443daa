#!/usr/bin/env sh
# Starts a worker on every host of conf/workers (see workers.sh), each registering with the master of this host's
# configuration (KINDLING_MASTER_HOST, else this host's name; KINDLING_MASTER_PORT, else 7077). Every host has
# Kindling at the same path as this one, KINDLING_HOME, and its own conf/kindling-env.sh there.
. "$(dirname -- "$0")/kindling-config.sh"

exec "$sbin/workers.sh" cd "$(quote "$KINDLING_HOME")" "&&" sbin/start-worker.sh "$(quote "$(master_url)")"
