#!/bin/sh
# Installs what testdata/laravel-app needs on a fresh Debian/Ubuntu CI machine
# (run as root): PHP 8.2 CLI with the pgsql/mysql/sqlite PDO drivers and
# Laravel 8.83 from Debian's php-laravel-framework package. There is no
# composer step: the app boots on the Debian autoloader.
set -eu

packages="php8.2-cli php8.2-pgsql php8.2-mysql php8.2-sqlite3 php8.2-redis php-laravel-framework"

have_everything() {
    command -v php >/dev/null 2>&1 || return 1
    php -r 'exit(stream_resolve_include_path("Illuminate/autoload.php") === false ? 1 : 0);' || return 1
    for ext in pdo_pgsql pdo_mysql pdo_sqlite redis pcntl posix; do
        php -m | grep -qx "$ext" || return 1
    done
}

if have_everything; then
    echo "install-deps: php and Laravel already present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages and not root; run: apt-get install -y $packages" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y --no-install-recommends $packages

have_everything || { echo "install-deps: still missing php, an extension or the framework after install" >&2; exit 1; }
php -r 'require "Illuminate/autoload.php"; echo "install-deps: Laravel ", Illuminate\Foundation\Application::VERSION, " on PHP ", PHP_VERSION, "\n";'
