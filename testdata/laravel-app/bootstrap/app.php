<?php

$app = new Illuminate\Foundation\Application(dirname(__DIR__));

// Several dialects run this app at once from one checkout, so everything the
// framework writes (package/service manifests, logs, cache) goes to a storage
// directory chosen by the caller instead of bootstrap/cache.
$storage = getenv('INTEROP_STORAGE') ?: dirname(__DIR__).'/storage';
foreach (['', '/framework', '/framework/cache', '/logs'] as $dir) {
    if (! is_dir($storage.$dir)) {
        mkdir($storage.$dir, 0777, true);
    }
}
$app->useStoragePath($storage);
foreach (['APP_PACKAGES_CACHE' => 'packages.php', 'APP_SERVICES_CACHE' => 'services.php', 'APP_CONFIG_CACHE' => 'config.php', 'APP_EVENTS_CACHE' => 'events.php'] as $key => $file) {
    if (getenv($key) === false) {
        $_SERVER[$key] = $_ENV[$key] = $storage.'/framework/'.$file;
    }
}

$app->singleton(Illuminate\Contracts\Console\Kernel::class, App\Console\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, App\Exceptions\Handler::class);

return $app;
