<?php

// Failed jobs are reported through the exception handler; keep those reports
// in storage/logs so a test can show them when something goes wrong.
return [
    'default' => 'single',
    'channels' => [
        'single' => [
            'driver' => 'single',
            'path' => storage_path('logs/laravel.log'),
            'level' => 'debug',
        ],
    ],
];
