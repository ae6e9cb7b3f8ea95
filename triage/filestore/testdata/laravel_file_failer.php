<?php
// laravel_file_failer.php: writes failed jobs the way Laravel's file
// failed-job driver does, to make fixtures in its exact format.
//
//   php laravel_file_failer.php ROWS.json FILE.json [LIMIT [TIMEZONE]]
//
// ROWS.json is a JSON array of failed_jobs rows, oldest first (as in
// testdata/laravel-rows/*.json: connection, queue, payload, exception,
// failed_at). Each row is logged, in order, into FILE.json, which is read
// first if it exists, exactly as a worker would log it.
//
// Where the logic comes from: laravel/framework,
// src/Illuminate/Queue/Failed/FileFailedJobProvider.php at commit
// 9772c512fbe0e07c43a6103d8ad857d0d6e9a0fa (the provider with $limit and
// the cache lock), methods log(), read() and write(). Laravel 8.83, the
// version installed here, has no file driver, so this restates them with
// plain PHP instead of running them. Two deliberate differences:
//   - Date::now() is replaced by the row's recorded failed_at, parsed in
//     TIMEZONE (the app timezone, default UTC), so the output is
//     reproducible;
//   - the 'laravel-failed-jobs' cache lock is left out: there is one writer.

if ($argc < 3) {
    fwrite(STDERR, "usage: php laravel_file_failer.php ROWS.json FILE.json [LIMIT [TIMEZONE]]\n");
    exit(2);
}
[$rowsPath, $path] = [$argv[1], $argv[2]];
$limit = isset($argv[3]) ? (int) $argv[3] : 100; // queue.failed.limit's default
date_default_timezone_set($argv[4] ?? 'UTC');    // config('app.timezone')

// read(): a missing or blank file, or one that is not a JSON array, is no
// jobs. json_decode without assoc: entries are objects, as Laravel keeps them.
function read_failed(string $path): array
{
    if (! file_exists($path)) {
        return [];
    }
    $content = file_get_contents($path);
    if (empty(trim($content))) {
        return [];
    }
    $content = json_decode($content);
    return is_array($content) ? $content : [];
}

// log(): the newest entry goes first; the array is cut to $limit; the file
// is rewritten whole with json_encode(JSON_PRETTY_PRINT).
function log_failed(string $path, int $limit, $connection, $queue, string $payload, string $exception, DateTimeInterface $failedAt): void
{
    $id = json_decode($payload, true)['uuid'];
    $jobs = read_failed($path);
    array_unshift($jobs, [
        'id' => $id,
        'connection' => $connection,
        'queue' => $queue,
        'payload' => $payload,
        'exception' => (string) mb_convert_encoding($exception, 'UTF-8'),
        'failed_at' => $failedAt->format('Y-m-d H:i:s'),
        'failed_at_timestamp' => $failedAt->getTimestamp(),
    ]);
    file_put_contents($path, json_encode(array_slice($jobs, 0, $limit), JSON_PRETTY_PRINT));
}

$rows = json_decode(file_get_contents($rowsPath), true, 512, JSON_THROW_ON_ERROR);
foreach ($rows as $row) {
    log_failed($path, $limit, $row['connection'], $row['queue'], $row['payload'], $row['exception'],
        new DateTimeImmutable($row['failed_at']));
}
