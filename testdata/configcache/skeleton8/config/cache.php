<?php

// The worker reads the queue:restart timestamp and maxExceptions counters from
// the cache; a per-process array store is enough for tests.
return [
    'default' => 'array',
    'stores' => [
        'array' => ['driver' => 'array', 'serialize' => false],
    ],
    'prefix' => 'interop_cache',
];
