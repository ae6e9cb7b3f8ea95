<?php

// The framework comes from Debian's php-laravel-framework package (its
// classmap autoloader on PHP's include path). App\ classes load from this
// app's app/ first, then from the Laravel 8 interop app's: the jobs, events,
// listeners, notifications and interop commands are the same classes on
// every Laravel the interop suite runs, only the skeleton differs.

$frameworkAutoloader = stream_resolve_include_path('Illuminate/autoload.php');
if ($frameworkAutoloader === false) {
    fwrite(STDERR, "Laravel framework not found on the include path (".get_include_path()."); run testdata/laravel-chroot/setup.sh sid\n");
    exit(78);
}
require_once $frameworkAutoloader;

spl_autoload_register(function (string $class): void {
    $prefix = 'App\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $relative = '/app/'.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
    foreach ([dirname(__DIR__), dirname(__DIR__, 2).'/laravel-app'] as $root) {
        if (is_file($root.$relative)) {
            require $root.$relative;

            return;
        }
    }
});
