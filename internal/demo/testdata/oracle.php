<?php
// Reads generated failed_jobs rows (JSON lines of {payload, key}) on stdin and
// checks them with the real PHP and Laravel 8.83 code: the payload re-encodes
// byte-for-byte with json_encode(JSON_UNESCAPED_UNICODE), data.command
// unserializes (after Laravel's Encrypter decrypts it when encrypted), and a
// signed closure verifies. Prints one line per row: "ok" or the problem.
require_once stream_resolve_include_path('Illuminate/autoload.php');

use Illuminate\Encryption\Encrypter;
use Laravel\SerializableClosure\SerializableClosure;

while (($line = fgets(STDIN)) !== false) {
    $in = json_decode($line, true);
    $raw = $in['payload'];
    $key = base64_decode(substr($in['key'], 7));
    SerializableClosure::setSecretKey($key);
    $p = json_decode($raw, true);
    if (!is_array($p)) { echo "json: ", json_last_error_msg(), "\n"; continue; }
    if (json_encode($p, JSON_UNESCAPED_UNICODE) !== $raw) { echo "reencode differs\n"; continue; }
    if (!isset($p['data']['command'])) { echo "ok\n"; continue; }
    $cmd = $p['data']['command'];
    if (!str_starts_with($cmd, 'O:')) {
        try {
            $cmd = (new Encrypter($key, 'AES-256-CBC'))->decrypt($cmd);
        } catch (Throwable $e) { echo "decrypt: ", $e->getMessage(), "\n"; continue; }
    }
    // No class is instantiated (that would restore models from a database),
    // so every object stays __PHP_Incomplete_Class and must re-serialize to
    // the same bytes: lengths, counts and visibility markers are all right.
    $obj = @unserialize($cmd, ['allowed_classes' => false]);
    if ($obj === false) { echo "unserialize failed\n"; continue; }
    if (serialize($obj) !== $cmd) { echo "reserialize differs\n"; continue; }
    if (str_contains($cmd, 'Serializers\\Signed')) {
        // A closure: let laravel/serializable-closure verify its signature.
        try {
            $o = unserialize($cmd, ['allowed_classes' => [SerializableClosure::class, Laravel\SerializableClosure\Serializers\Signed::class, Laravel\SerializableClosure\Serializers\Native::class]]);
        } catch (Throwable $e) { echo "closure: ", get_class($e), " ", $e->getMessage(), "\n"; continue; }
    }
    echo "ok\n";
}
