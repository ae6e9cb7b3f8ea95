<?php
// Oracle for dsn_test.go: runs Laravel 8.83's ConfigurationUrlParser on the
// URL in argv[1] over an empty connection config and prints the result as
// JSON, or {"error": "..."}.
require '/usr/share/php/Illuminate/Support/autoload.php';
require '/usr/share/php/Illuminate/Collections/autoload.php';
try {
    $config = (new Illuminate\Support\ConfigurationUrlParser())->parseConfiguration(['url' => $argv[1]]);
    echo json_encode((object) $config);
} catch (Throwable $e) {
    echo json_encode(['error' => $e->getMessage()]);
}
