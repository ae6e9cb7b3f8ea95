<?php

use Illuminate\Foundation\Application;
use Illuminate\Foundation\Configuration\Exceptions;
use Illuminate\Foundation\Configuration\Middleware;

$app = Application::configure(basePath: dirname(__DIR__))
    // The interop commands are the Laravel 8 app's classes (see
    // bootstrap/autoload.php), named here because discovery only scans
    // this app's app/Console/Commands.
    ->withCommands([
        App\Console\Commands\ResetSchemaCommand::class,
        App\Console\Commands\DispatchCommand::class,
        App\Console\Commands\StatusCommand::class,
        App\Console\Commands\ExportFailedCommand::class,
        App\Console\Commands\DispatchRedisCommand::class,
        App\Console\Commands\DispatchOrdersCommand::class,
        App\Console\Commands\DispatchRecentCommand::class,
    ])
    ->withMiddleware(function (Middleware $middleware): void {
        //
    })
    ->withExceptions(function (Exceptions $exceptions): void {
        //
    })->create();

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

return $app;
