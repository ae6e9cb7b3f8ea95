<?php

return [
    'name' => env('APP_NAME', 'interop'),
    'env' => env('APP_ENV', 'testing'),
    'debug' => (bool) env('APP_DEBUG', false),
    'url' => 'http://localhost',
    // Laravel writes failed_at as wall-clock text in this zone.
    'timezone' => env('APP_TIMEZONE', 'UTC'),
    'locale' => 'en',
    'fallback_locale' => 'en',
    // Test-only key, committed on purpose: jobtriage's tests need it to read
    // encrypted job payloads. Never reuse it anywhere real.
    'key' => env('APP_KEY', 'base64:e5VAzEgp8tA5XxZAHumsAoNkEEHyNzs0zaG3grPQ+L4='),
    'cipher' => 'AES-256-CBC',
    'providers' => [
        Illuminate\Bus\BusServiceProvider::class,
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Foundation\Providers\ConsoleSupportServiceProvider::class,
        // queue:work asks for MaintenanceMode from Laravel 10 on, which
        // FoundationServiceProvider binds; 8.83 runs as it always did.
        ...(version_compare(Illuminate\Foundation\Application::VERSION, '10.0', '>=')
            ? [Illuminate\Foundation\Providers\FoundationServiceProvider::class] : []),
        Illuminate\Database\DatabaseServiceProvider::class,
        Illuminate\Encryption\EncryptionServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Queue\QueueServiceProvider::class,
        Illuminate\Redis\RedisServiceProvider::class,
        Illuminate\Notifications\NotificationServiceProvider::class,
        App\Providers\AppServiceProvider::class,
    ],
    'aliases' => [],
];
