<?php
// Oracle for dotenv_test.go: parses stdin with the system's phpdotenv (Debian
// php-vlucas-phpdotenv, the version Laravel 8.83 requires) into an array
// repository seeded from the JSON object in argv[1], and prints
// {"vars": {...}} or {"error": "..."} as JSON.
spl_autoload_register(function ($class) {
    $file = '/usr/share/php/' . str_replace('\\', '/', $class) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
use Dotenv\Loader\Loader;
use Dotenv\Parser\Parser;
use Dotenv\Repository\Adapter\ArrayAdapter;
use Dotenv\Repository\RepositoryBuilder;

$environ = json_decode($argv[1] ?? '{}', true) ?: [];
$adapter = ArrayAdapter::create()->get();
foreach ($environ as $k => $v) {
    $adapter->write($k, $v);
}
$repo = RepositoryBuilder::createWithNoAdapters()->addAdapter($adapter)->immutable()->make();
// Str::utf8 is what Dotenv's file reader applies (encoding repair, BOM removal).
$content = Dotenv\Util\Str::utf8(stream_get_contents(STDIN))->success()->get();
try {
    $entries = (new Parser())->parse($content);
    $loaded = (new Loader())->load($repo, $entries);
} catch (Throwable $e) {
    echo json_encode(['error' => $e->getMessage()]);
    exit(0);
}
$vars = [];
foreach ($loaded as $k => $_) {
    if ($repo->has($k)) {
        $vars[$k] = $repo->get($k);
    }
}
echo json_encode(['vars' => (object) $vars]);
