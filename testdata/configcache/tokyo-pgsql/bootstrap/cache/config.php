<?php return array (
  'app' => 
  array (
    'name' => 'Tokyo Ops',
    'env' => 'testing',
    'debug' => false,
    'url' => 'http://localhost',
    'timezone' => 'Asia/Tokyo',
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
    'default' => 'pgsql',
    'connections' => 
    array (
      'sqlite' => 
      array (
        'driver' => 'sqlite',
        'database' => 'ops',
        'prefix' => '',
        'foreign_key_constraints' => true,
      ),
      'mysql' => 
      array (
        'driver' => 'mysql',
        'host' => 'pg.example.internal',
        'port' => '6432',
        'database' => 'ops',
        'username' => 'ops_user',
        'password' => 'p\'a"ss\\w\\rd-ü€-😀 $HOME 	tab',
        'charset' => 'utf8mb4',
        'collation' => 'utf8mb4_unicode_ci',
        'prefix' => '',
        'strict' => true,
        'engine' => NULL,
      ),
      'pgsql' => 
      array (
        'driver' => 'pgsql',
        'host' => 'pg.example.internal',
        'port' => '6432',
        'database' => 'ops',
        'username' => 'ops_user',
        'password' => 'p\'a"ss\\w\\rd-ü€-😀 $HOME 	tab',
        'charset' => 'utf8',
        'prefix' => 'jt_',
        'schema' => 'ops',
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
        'prefix' => 'tokyo_ops_database_',
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
        'path' => '/tmp/jobtriage-configcache/tokyo-pgsql/storage/logs/laravel.log',
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
      'database' => 'pgsql',
      'table' => 'job_batches',
    ),
    'failed' => 
    array (
      'driver' => 'database-uuids',
      'database' => 'pgsql',
      'table' => 'failed_jobs_v2',
    ),
  ),
);
