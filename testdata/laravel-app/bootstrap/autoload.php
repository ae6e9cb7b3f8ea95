<?php

// The framework comes from Debian's php-laravel-framework package, which ships
// its own classmap autoloader on PHP's include path (/usr/share/php). The app's
// own App\ classes get a tiny PSR-4 loader, which is all composer would add.

$frameworkAutoloader = stream_resolve_include_path('Illuminate/autoload.php');
if ($frameworkAutoloader === false) {
    fwrite(STDERR, "Laravel framework not found on the include path (".get_include_path()."); run testdata/laravel-app/install-deps.sh\n");
    exit(78);
}
require_once $frameworkAutoloader;

spl_autoload_register(function (string $class): void {
    $prefix = 'App\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = dirname(__DIR__).'/app/'.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
    if (is_file($file)) {
        require $file;
    }
});
