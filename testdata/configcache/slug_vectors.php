<?php
// Prints Laravel 8's Str::slug for each input and separator as JSON lines
// inside an array; regen.sh writes the output to slug_vectors.json.
require 'Illuminate/autoload.php';

use Illuminate\Support\Str;

$inputs = [
    'My App', 'Laravel', 'Foo@Bar Baz', 'ÄÖÜ straße', 'Hello World', 'Foo Bar_baz', 'Ünïcödé Ärger!',
    '  --Mixed--  Case@Home  ', 'Ελληνικά και русский', 'Crème brûlée à la carte', '日本語のテキスト',
    'Łódź Żółć', 'Ærøskøbing Åse', 'Ça va? Oui!', "tab\tand\nnewline", 'a__b--c  d', '€100 & £50',
    'emoji 😀 face', '', '@@@', '___', '---', '0', 'ǅemal ǈubljana', "nul\0byte", "bad\xffutf8",
    'Đặng Thị Thu Hà', 'ﬁancé ﬂow', 'x²+y³', 'İstanbul ıi', 'Straße', 'Ŀl', 'São Paulo',
    "ctl\x10\x13chars", 'Dvořák', 'Ñandú', 'Ψυχή', 'Юлия Щукина', 'Ĳssel', 'Þór', 'ǆ dž',
];
$seps = ['-', '_', '.', '', '__', '-_', 'a', ' ', '@', 'ü', '..', "\xff"];
$out = [];
foreach ($inputs as $in) {
    foreach ($seps as $sep) {
        $out[] = json_encode(['in' => base64_encode($in), 'sep' => base64_encode($sep), 'out' => base64_encode(@Str::slug($in, $sep))]);
    }
}
echo "[\n" . implode(",\n", $out) . "\n]\n";
