#!/bin/sh
# Builds (or reuses) a minimal Debian chroot with PHP 8.4 and Debian's
# php-laravel-framework, so the interop suite can run real Laravel 10 and 13
# workers on a bookworm machine without upgrading any host package.
#
#   testdata/laravel-chroot/setup.sh RELEASE     # RELEASE: trixie (Laravel 10.48) or sid (Laravel 13.31)
#
# Result: $JOBTRIAGE_LARAVEL_CACHE/RELEASE (default /var/cache/jobtriage-laravel),
# with /proc, /dev, /tmp, /run/mysqld and this checkout bind-mounted at their own paths
# inside, and the wrapper $JOBTRIAGE_LARAVEL_CACHE/RELEASE-php, which runs
# `php ARGS` inside the chroot in the caller's working directory with the
# caller's environment. The interop harness is told about it by
# JOBTRIAGE_INTEROP_LARAVEL (see interop/doc.go).
#
# Idempotent: a chroot whose framework already has the release's
# major.minor is reused as it is (no debootstrap, no apt); only the mounts
# and the wrapper are (re)made. A fresh chroot is built beside the cache as
# RELEASE.new and renamed when complete, so an interrupted run never leaves
# a half-built chroot that looks finished. Never `rm -rf` a chroot while its
# bind mounts are up: that would delete the checkout and /tmp.
#
# Runs as root (debootstrap, mount, chroot). Needs debootstrap on the host
# (`apt-get install -y --no-upgrade debootstrap`: a new package, no upgrade).
set -eu

release=${1:?usage: setup.sh trixie|sid}
case $release in
trixie) want=10.48 ;;
sid) want=13.31 ;;
*)
	echo "setup.sh: unknown release $release (trixie: Laravel 10.48, sid: Laravel 13.31)" >&2
	exit 2
	;;
esac

cache=${JOBTRIAGE_LARAVEL_CACHE:-/var/cache/jobtriage-laravel}
root=$cache/$release
mirror=${JOBTRIAGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
checkout=$(cd "$(dirname "$0")/../.." && pwd -P)
packages="php8.4-cli php8.4-pgsql php8.4-mysql php8.4-sqlite3 php8.4-redis php-laravel-framework"

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: must run as root (debootstrap, mount, chroot)" >&2
	exit 1
fi

# framework_version ROOT: the Laravel version the chroot's framework reports,
# empty when there is none.
framework_version() {
	# usr/bin/php is an absolute link into the chroot's /etc/alternatives:
	# test the link itself, not what it points to on the host.
	[ -L "$1/usr/bin/php" ] || [ -e "$1/usr/bin/php" ] || return 0
	chroot "$1" php -r 'if (($f = stream_resolve_include_path("Illuminate/autoload.php")) !== false) { require $f; echo Illuminate\Foundation\Application::VERSION; }' 2>/dev/null || true
}

mount_once() { # type-or-bind source target
	mountpoint -q "$3" && return 0
	mkdir -p "$3"
	if [ "$1" = bind ]; then
		mount --bind "$2" "$3"
	else
		mount -t "$1" "$2" "$3"
	fi
}

have=$(framework_version "$root")
case $have in
"$want" | "$want".*)
	echo "setup.sh: $release: reusing $root (Laravel $have)"
	;;
*)
	command -v debootstrap >/dev/null 2>&1 || {
		echo "setup.sh: debootstrap missing; run: apt-get install -y --no-upgrade debootstrap" >&2
		exit 1
	}
	if [ -e "$root" ]; then
		echo "setup.sh: $root exists but has Laravel '${have:-none}', want $want.x; move it away first" >&2
		exit 1
	fi
	new=$root.new
	if [ -e "$new" ]; then # an interrupted build: only proc was ever mounted in it
		mountpoint -q "$new/proc" && umount "$new/proc"
		rm -rf "$new"
	fi
	mkdir -p "$cache"
	echo "setup.sh: $release: debootstrap into $new"
	debootstrap --variant=minbase --include=ca-certificates "$release" "$new" "$mirror"
	# sid's Release file is past its Valid-Until date.
	echo 'Acquire::Check-Valid-Until "false";' >"$new/etc/apt/apt.conf.d/99novalid"
	mount -t proc proc "$new/proc"
	chroot "$new" sh -c "DEBIAN_FRONTEND=noninteractive apt-get update -q && apt-get install -y -q --no-install-recommends $packages && apt-get clean"
	umount "$new/proc"
	mv "$new" "$root"
	have=$(framework_version "$root")
	case $have in
	"$want" | "$want".*) ;;
	*)
		echo "setup.sh: $release installed Laravel '${have:-none}', want $want.x" >&2
		exit 1
		;;
	esac
	echo "setup.sh: $release: built $root (Laravel $have)"
	;;
esac

# Debian's 13.x framework looks for its default config files at
# /usr/share/config (the path its config loader computes from the package
# layout); they are shipped under php/Illuminate/config.
if [ -d "$root/usr/share/php/Illuminate/config" ] && [ ! -e "$root/usr/share/config" ]; then
	ln -s php/Illuminate/config "$root/usr/share/config"
fi

mount_once proc proc "$root/proc"
mount_once bind /dev "$root/dev"
mount_once bind /tmp "$root/tmp"
# A checkout under /tmp (a CI clone) is already there through /tmp; a bind
# of its own would make its directory a mount point that rm -rf cannot
# remove on the host.
case "$checkout" in
/tmp/*) ;;
*) mount_once bind "$checkout" "$root$checkout" ;;
esac
# MariaDB's socket directory: an app with DB_HOST=localhost connects through
# the socket, as the interop profile's socket variant does.
if [ -d /run/mysqld ]; then
	mount_once bind /run/mysqld "$root/run/mysqld"
fi

wrapper=$cache/$release-php
cat >"$wrapper.tmp" <<EOF
#!/bin/sh
# php $have (Debian $release chroot $root) in the caller's directory and
# environment; made by testdata/laravel-chroot/setup.sh.
exec chroot '$root' /usr/bin/env -C "\$PWD" php "\$@"
EOF
chmod 755 "$wrapper.tmp"
mv "$wrapper.tmp" "$wrapper"

# The wrapper runs in the caller's directory, which must be visible inside:
# check from / (always is).
cd /
"$wrapper" -r 'foreach (["pdo_pgsql", "pdo_mysql", "pdo_sqlite", "redis", "pcntl", "posix"] as $e) { if (! extension_loaded($e)) { fwrite(STDERR, "missing PHP extension $e\n"); exit(1); } }'
echo "setup.sh: $release: $wrapper (Laravel $have, PHP $("$wrapper" -r 'echo PHP_VERSION;'))"
