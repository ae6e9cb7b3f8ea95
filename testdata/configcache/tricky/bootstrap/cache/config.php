<?php return array (
  'app' => 
  array (
    'name' => 'Tricky App',
    'env' => 'testing',
    'debug' => true,
    'url' => 'https://tricky.example/',
    'timezone' => 'Pacific/Auckland',
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
    'default' => 'sqlite',
    'connections' => 
    array (
      'sqlite' => 
      array (
        'driver' => 'sqlite',
        'database' => '/tmp/jobtriage-configcache/tricky/database/database.sqlite',
        'prefix' => '',
        'foreign_key_constraints' => false,
      ),
      'mysql' => 
      array (
        'driver' => 'mysql',
        'host' => '127.0.0.1',
        'port' => '3306',
        'database' => 'test',
        'username' => 'root',
        'password' => '',
        'charset' => 'utf8mb4',
        'collation' => 'utf8mb4_unicode_ci',
        'prefix' => '',
        'strict' => true,
        'engine' => NULL,
        'options' => 
        array (
          1009 => '/etc/ssl/ca.pem',
        ),
      ),
      'pgsql' => 
      array (
        'driver' => 'pgsql',
        'host' => '127.0.0.1',
        'port' => '5432',
        'database' => 'test',
        'username' => 'postgres',
        'password' => '',
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
        'prefix' => 'tricky_app_database_',
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
        'path' => '/tmp/jobtriage-configcache/tricky/storage/logs/laravel.log',
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
        'connection' => NULL,
        'table' => 'jobs',
        'queue' => 'default',
        'retry_after' => 150,
        'after_commit' => true,
      ),
    ),
    'batching' => 
    array (
      'database' => 'sqlite',
      'table' => 'job_batches',
    ),
    'failed' => 
    array (
      'driver' => 'database-uuids',
      'database' => 'sqlite',
      'table' => 'billing_failed_jobs',
    ),
    'tricky' => 
    array (
      'nul' => 'a' . "\0" . 'b',
      'nul_only' => '' . "\0" . '',
      'quotes' => 'it\'s a \\ backslash \\n',
      'dq' => 'tab	here $notvar AA☺  \\{',
      'interp' => 'hello 120',
      'var' => 120,
      'neg' => -42,
      'big' => 9223372036854775807,
      'min' => -9223372036854775807-1,
      'float' => 1.5,
      'huge' => 1.0E+25,
      'negzero' => -0.0,
      'nan' => NAN,
      'inf' => INF,
      'ninf' => -INF,
      'hex' => 31,
      'octal' => 15,
      'legacy_octal' => 15,
      'sep' => 1000000,
      'list' => 
      array (
        0 => 'i',
        1 => 'g',
        5 => 'c',
        6 => 'd',
        7 => 'e',
        '08' => 'f',
        '' => 'h',
      ),
      'neg_keys' => 
      array (
        -5 => 'x',
        -4 => 'y',
      ),
      'dup' => 
      array (
        'k' => 2,
        'other' => 0,
      ),
      'ternary' => 'debug',
      'elvis' => 'fallback',
      'coalesce' => 'coalesced',
      'not' => false,
      'casts' => 
      array (
        0 => 12,
        1 => 1000,
        2 => 2.5,
        3 => false,
        4 => true,
        5 => '1',
        6 => '0.1',
        7 => 9,
        8 => false,
        9 => '1',
        10 => '',
        11 => -1,
        12 => '1.0E+15',
        13 => 42,
        14 => false,
      ),
      'class' => 'App\\Jobs\\SyncInvoice',
      'enum' => 
      \App\Support\Mode::Fast,
      'object' => 
      (object) array(
         'a' => 1,
      ),
      'point' => 
      \App\Support\Point::__set_state(array(
         'x' => 1,
         'y' => 2,
      )),
      'call' => 
      array (
        0 => 1,
        2 => 2,
      ),
      'paths' => 
      array (
        0 => '/tmp/jobtriage-configcache/tricky',
        1 => '/tmp/jobtriage-configcache/tricky/x/y',
        2 => '/tmp/jobtriage-configcache/tricky/storage/app',
        3 => '/tmp/jobtriage-configcache/tricky/database/database.sqlite',
        4 => '/tmp/jobtriage-configcache/tricky/app',
        5 => '/tmp/jobtriage-configcache/tricky/config/queue.php',
        6 => '/tmp/jobtriage-configcache/tricky/resources/views',
        7 => '/tmp/jobtriage-configcache/tricky/public/index.php',
        8 => '/tmp/jobtriage-configcache/tricky/config',
        9 => '/tmp/jobtriage-configcache/tricky',
        10 => '/tmp/jobtriage-configcache',
        11 => '/tmp/jobtriage-configcache/tricky0',
        12 => '/tmp/jobtriage-configcache/tricky/storage',
        13 => '/tmp/jobtriage-configcache/tricky/public',
      ),
      'slugs' => 
      array (
        0 => 'hello-world',
        1 => 'foo_bar_baz',
        2 => 'unicode-arger',
        3 => 'mixed-case-at-home',
        4 => 'ellinika.kai.russkii',
        5 => 'aou_strasse',
      ),
      'env_cast' => 
      array (
        0 => true,
        1 => false,
        2 => '',
        3 => NULL,
        4 => 'inner quoted',
        5 => true,
        6 => 'plain value',
        7 => '\'half',
        8 => '\'',
      ),
      'concat' => 'a111.5-3',
      'arith' => 1440,
      'heredoc' => 'heredoc text',
      'nowdoc' => 'nowdoc ) ] text',
      2 => 5,
      'after_unknown_key' => 'still here',
      'nested' => 
      array (
        'a' => 
        array (
          'b' => 
          array (
            'c' => 'deep',
          ),
        ),
      ),
      'dotted.key' => 'literal',
    ),
  ),
);
