<?php

namespace App\Interop;

use RuntimeException;

// Outcome is how interop jobs talk to the Go test: they fail while the file
// named by INTEROP_FLAG_FILE is missing, and once it exists they append
// {"class":..., "args":{...}} to INTEROP_RESULTS_FILE, proving that a re-queued
// job ran with its original arguments.
final class Outcome
{
    public static function flagIsSet(): bool
    {
        $flag = getenv('INTEROP_FLAG_FILE');

        return is_string($flag) && $flag !== '' && file_exists($flag);
    }

    public static function record(string $class, array $args): void
    {
        $path = getenv('INTEROP_RESULTS_FILE');
        if (! is_string($path) || $path === '') {
            throw new RuntimeException('INTEROP_RESULTS_FILE is not set; cannot record the result of '.$class);
        }
        $line = json_encode(['class' => $class, 'args' => (object) $args], JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR);
        if (file_put_contents($path, $line."\n", FILE_APPEND | LOCK_EX) === false) {
            throw new RuntimeException('cannot append to '.$path);
        }
    }
}
