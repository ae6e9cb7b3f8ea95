#!/usr/bin/env bash
# Regenerates every fixture's bootstrap/cache/config.php with a real
# `php artisan config:cache` (Laravel 8.83 from Debian's php-laravel-framework).
#
# Each fixture directory holds the inputs: config/*.php, .env and optionally
# app/ classes the config refers to. For each one this script copies
# testdata/laravel-app to ROOT_BASE/<fixture> (a fixed path, because Laravel
# writes absolute paths such as storage_path() into the cache), replaces its
# config/ with the fixture's, adds the fixture's .env and app/ files, runs
# config:cache with an empty environment (only .env may set variables), and
# copies the cache back. The file ROOT records the base path it was built at;
# the Go tests evaluate config/*.php against that same root.
#
# The Str::slug vectors the Go tests check are regenerated here too.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
app=$(cd "$here/../laravel-app" && pwd)
ROOT_BASE=/tmp/jobtriage-configcache

for dir in "$here"/*/; do
	fixture=$(basename "$dir")
	[ -d "$dir/config" ] || continue
	root=$ROOT_BASE/$fixture
	rm -rf "$root"
	mkdir -p "$root"
	cp -a "$app"/. "$root"/
	rm -rf "$root/config" "$root/storage" "$root/.env"
	mkdir -p "$root/storage" "$root/bootstrap/cache"
	cp -a "$dir/config" "$root/config"
	cp "$dir/.env" "$root/.env"
	if [ -d "$dir/app" ]; then
		cp -a "$dir/app"/. "$root/app"/
	fi
	(cd "$root" && env -i PATH="$PATH" HOME="$root" \
		APP_CONFIG_CACHE="$root/bootstrap/cache/config.php" \
		php artisan config:cache >/dev/null)
	mkdir -p "$dir/bootstrap/cache"
	cp "$root/bootstrap/cache/config.php" "$dir/bootstrap/cache/config.php"
	printf '%s\n' "$root" >"$dir/ROOT"
	echo "$fixture: $(wc -c <"$dir/bootstrap/cache/config.php") bytes"
done

php "$here/slug_vectors.php" >"$here/slug_vectors.json"
echo "slug_vectors.json: $(grep -c '"in"' "$here/slug_vectors.json") vectors"
