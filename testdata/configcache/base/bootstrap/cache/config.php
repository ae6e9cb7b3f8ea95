<?php return array (
  'app' => 
  array (
    'name' => 'interop',
    'env' => 'production',
    'debug' => false,
    'url' => 'http://localhost',
    'timezone' => 'UTC',
    'locale' => 'en',
    'fallback_locale' => 'en',
    'key' => 'base64:e5VAzEgp8tA5XxZAHumsAoNkEEHyNzs0zaG3grPQ+L4=',
    'cipher' => 'AES-256-CBC',
    'providers' => 
    array (
      0 => 'Illuminate\\Bus\\BusServiceProvider',
      1 => 'Illuminate\\Cache\\CacheServiceProvider',
      2 => 'Illuminate\\Foundation\\Providers\\ConsoleSupportServiceProvider',
      3 => 'Illuminate\\Database\\DatabaseServiceProvider',
      4 => 'Illuminate\\Encryption\\EncryptionServiceProvider',
      5 => 'Illuminate\\Filesystem\\FilesystemServiceProvider',
      6 => 'Illuminate\\Queue\\QueueServiceProvider',
      7 => 'Illuminate\\Redis\\RedisServiceProvider',
      8 => 'Illuminate\\Notifications\\NotificationServiceProvider',
      9 => 'App\\Providers\\AppServiceProvider',
    ),
    'aliases' => 
    array (
    ),
  ),
  'cache' => 
  array (
    'default' => 'array',
    'stores' => 
    array (
      'array' => 
      array (
        'driver' => 'array',
        'serialize' => false,
      ),
    ),
    'prefix' => 'interop_cache',
  ),
  'database' => 
  array (
    'default' => 'mysql',
    'connections' => 
    array (
      'sqlite' => 
      array (
        'driver' => 'sqlite',
        'database' => 'shop',
        'prefix' => '',
        'foreign_key_constraints' => true,
      ),
      'mysql' => 
      array (
        'driver' => 'mysql',
        'host' => 'db.internal',
        'port' => '3307',
        'database' => 'shop',
        'username' => 'shop',
        'password' => 'secret',
        'charset' => 'utf8mb4',
        'collation' => 'utf8mb4_unicode_ci',
        'prefix' => '',
        'strict' => true,
        'engine' => NULL,
      ),
      'pgsql' => 
      array (
        'driver' => 'pgsql',
        'host' => 'db.internal',
        'port' => '3307',
        'database' => 'shop',
        'username' => 'shop',
        'password' => 'secret',
        'charset' => 'utf8',
        'prefix' => '',
        'schema' => 'public',
        'sslmode' => 'prefer',
      ),
    ),
    'migrations' => 'migrations',
    'redis' => 
    array (
      'client' => 'phpredis',
      'options' => 
      array (
        'cluster' => 'redis',
        'prefix' => 'interop_database_',
      ),
      'default' => 
      array (
        'url' => NULL,
        'host' => '127.0.0.1',
        'password' => NULL,
        'port' => '6379',
        'database' => '0',
      ),
    ),
  ),
  'logging' => 
  array (
    'default' => 'single',
    'channels' => 
    array (
      'single' => 
      array (
        'driver' => 'single',
        'path' => '/tmp/jobtriage-configcache/base/storage/logs/laravel.log',
        'level' => 'debug',
      ),
    ),
  ),
  'queue' => 
  array (
    'default' => 'database',
    'connections' => 
    array (
      'database' => 
      array (
        'driver' => 'database',
        'table' => 'jobs',
        'queue' => 'default',
        'retry_after' => 90,
        'after_commit' => false,
      ),
      'redis' => 
      array (
        'driver' => 'redis',
        'connection' => 'default',
        'queue' => 'default',
        'retry_after' => 90,
        'block_for' => NULL,
        'after_commit' => false,
      ),
    ),
    'batching' => 
    array (
      'database' => 'mysql',
      'table' => 'job_batches',
    ),
    'failed' => 
    array (
      'driver' => 'database-uuids',
      'database' => 'mysql',
      'table' => 'failed_jobs',
    ),
  ),
);
