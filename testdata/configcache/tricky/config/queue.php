<?php

declare(strict_types=1);

use App\Support\Mode;
use Illuminate\Support\Str;

/*
 * Every grammar feature jobtriage's static evaluator knows, and a few it
 * must give up on (marked "unknown") without losing the rest of the file.
 */
$retry = 120; // a variable: unknown to the static evaluator

return array(
    'default' => env('QUEUE_CONNECTION') ?: 'database',
    'connections' => array(
        'database' => [
            'driver' => 'database',
            'connection' => env('DB_QUEUE_CONNECTION') ?? null,
            'table' => "jobs",
            'queue' => env("DB_QUEUE", 'default'),
            'retry_after' => (int) env('DB_QUEUE_RETRY_AFTER', '90 seconds'),
            # the default of env() is not cast: the string 'false' is truthy
            'after_commit' => (bool) env('QUEUE_AFTER_COMMIT', 'false'),
        ],
    ),
    'batching' => ['database' => env('DB_CONNECTION', 'sqlite'), 'table' => 'job_batches'],
    'failed' => [
        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),
        'database' => env('DB_CONNECTION', 'sqlite'),
        'table' => env('FAILED_TABLE_PREFIX', 'app') . '_failed_' . "jobs",
    ],
    'tricky' => [
        'nul' => "a\0b",
        'nul_only' => "\0",
        'quotes' => 'it\'s a \\ backslash \n',
        'dq' => "tab\there \$notvar \x41\101\u{263A} \e \{",
        'interp' => "hello $retry", // unknown
        'var' => $retry, // unknown
        'neg' => -42,
        'big' => 9223372036854775807,
        'min' => PHP_INT_MIN,
        'float' => 1.5,
        'huge' => 1.0E+25,
        'negzero' => -0.0,
        'nan' => NAN,
        'inf' => INF,
        'ninf' => -INF,
        'hex' => 0x1F,
        'octal' => 0o17,
        'legacy_octal' => 017,
        'sep' => 1_000_000,
        'list' => ['a', 'b', 5 => 'c', 'd', '7' => 'e', '08' => 'f', true => 'g', null => 'h', false => 'i'],
        'neg_keys' => [-5 => 'x', 'y'],
        'dup' => ['k' => 1, 'other' => 0, 'k' => 2],
        'ternary' => env('APP_DEBUG') ? 'debug' : 'quiet',
        'elvis' => env('MISSING_VAR') ?: 'fallback',
        'coalesce' => env('MISSING_VAR') ?? 'coalesced',
        'not' => !env('APP_DEBUG'),
        'casts' => [(int) '12abc', (int) '1e3', (float) '2.5x', (bool) '0', (bool) '0.0', (string) 1.0, (string) 0.1,
            (int) 9.9, (bool) [], (string) true, (string) null, (int) -1.9, (float) 1e15 . '', ( integer ) " 42 ", (boolean) 0.0],
        'class' => \App\Jobs\SyncInvoice::class,
        'enum' => Mode::Fast, // unknown
        'object' => (object) ['a' => 1], // unknown
        'point' => \App\Support\Point::make(1, 2), // unknown
        'call' => array_filter([1, 0, 2]), // unknown
        'paths' => [base_path(), base_path('x/y'), storage_path('app'), database_path('database.sqlite'), app_path(),
            config_path('queue.php'), resource_path('views'), public_path('/index.php'), __DIR__, dirname(__DIR__),
            dirname(__DIR__, 2), base_path('0'), storage_path(''), public_path()],
        'slugs' => [Str::slug('Hello World'), Str::slug('Foo Bar_baz', '_'), \Illuminate\Support\Str::slug('Ünïcödé Ärger!'),
            Str::slug('  --Mixed--  Case@Home  '), Str::slug('Ελληνικά και русский', '.'), Str::slug('ÄÖÜ straße', '_')],
        'env_cast' => [env('CAST_TRUE'), env('CAST_FALSE'), env('CAST_EMPTY'), env('CAST_NULL'), env('CAST_QUOTED'),
            env('CAST_UPPER'), env('CAST_PLAIN'), env('CAST_HALF_QUOTED'), env('CAST_SINGLE')],
        'concat' => 'a' . 1 . true . null . 1.5 . -3,
        'arith' => 60 * 24,
        'heredoc' => <<<EOT
            heredoc text
            EOT, // unknown
        'nowdoc' => <<<'EOT'
            nowdoc ) ] text
            EOT, // unknown
        PDO::ATTR_TIMEOUT => 5, // unknown key
        'after_unknown_key' => 'still here',
        'nested' => ['a' => ['b' => ['c' => 'deep']]],
        'dotted.key' => 'literal',
    ],
);
