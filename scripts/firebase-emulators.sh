#!/usr/bin/env bash
# Runs a command under `firebase emulators:exec` (firebase-tools 14, pinned in
# package.json) with the Debian emulator binaries, since firebase-tools cannot
# download its own here. Usage: npm run emulators:exec -- "npm test"
set -euo pipefail
cd "$(dirname "$0")/.."
SDK=/usr/lib/google-cloud-sdk/platform
launcher=.sluice/firestore-launcher.jar
if [ ! -f "$launcher" ]; then
  mkdir -p .sluice
  tmp=$(mktemp -d)
  printf 'Main-Class: com.google.cloud.datastore.emulator.firestore.CloudFirestore\nClass-Path: file:%s/cloud-firestore-emulator/cloud-firestore-emulator.jar\n' "$SDK" >"$tmp/manifest.txt"
  jar cfm "$launcher" "$tmp/manifest.txt"
  rm -rf "$tmp"
fi
export FIRESTORE_EMULATOR_BINARY_PATH="$PWD/$launcher"
export PUBSUB_EMULATOR_BINARY_PATH="$SDK/pubsub-emulator/bin/cloud-pubsub-emulator"
exec npx firebase emulators:exec --project demo-sluice --only firestore,pubsub "$@"
