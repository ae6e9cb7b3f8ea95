package phpconf

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// varExportScript makes random nested PHP values, writes var_export of all
// of them as a config cache to argv[1], and prints every leaf to stdout as
// "path<TAB>type<TAB>payload": strings base64-encoded, floats as the hex
// of their IEEE bits, so the Go side can check the cache reading exactly.
const varExportScript = `<?php
mt_srand((int) $argv[2]);
function rnd_string() {
    $pool = ["", "a", "'", "\\", "\\'", "'\\", "\0", "\0\0", "a\0b", "\n", "\r\n", "ü", "😀", "\xff\xfe", "' . \"\\0\" . '", "NULL", "array (", ")", "=>", ",", "?>", "<?php", "\"", '$x', '{$y}', "\t"];
    $s = "";
    $n = mt_rand(0, 4);
    for ($i = 0; $i < $n; $i++) {
        $s .= mt_rand(0, 3) == 0 ? chr(mt_rand(0, 255)) : $pool[mt_rand(0, count($pool) - 1)];
    }
    return $s;
}
function rnd_float() {
    $pool = [0.0, -0.0, 1.5, 0.1, 1e25, 1e-7, 5e-324, 1.7976931348623157e308, NAN, INF, -INF, 1e15, 123456789.125, -2.5e-10, 100.0];
    if (mt_rand(0, 1)) return $pool[mt_rand(0, count($pool) - 1)];
    return unpack('e', pack('P', mt_rand() << 32 | mt_rand()))[1];
}
function rnd_value($depth) {
    switch (mt_rand(0, $depth > 0 ? 7 : 5)) {
        case 0: return null;
        case 1: return (bool) mt_rand(0, 1);
        case 2: return [PHP_INT_MIN, PHP_INT_MAX, 0, -1, mt_rand(), -mt_rand()][mt_rand(0, 5)];
        case 3: return rnd_float();
        case 4: case 5: return rnd_string();
        default:
            $a = [];
            $n = mt_rand(0, 5);
            for ($i = 0; $i < $n; $i++) {
                $k = mt_rand(0, 2) ? rnd_string() : [PHP_INT_MIN, PHP_INT_MAX, -1, 0, 7, mt_rand()][mt_rand(0, 5)];
                $a[$k] = rnd_value($depth - 1);
            }
            return $a;
    }
}
function dump($path, $v) {
    if (is_array($v)) {
        echo $path, "\tarray\t", count($v), "\n";
        foreach ($v as $k => $x) dump($path . ',' . base64_encode((string) $k), $x);
        return;
    }
    if (is_null($v)) { echo $path, "\tnull\t\n"; return; }
    if (is_bool($v)) { echo $path, "\tbool\t", $v ? 1 : 0, "\n"; return; }
    if (is_int($v)) { echo $path, "\tint\t", $v, "\n"; return; }
    if (is_float($v)) { echo $path, "\tfloat\t", bin2hex(pack('e', $v)), "\n"; return; }
    echo $path, "\tstring\t", base64_encode($v), "\n";
}
$values = [];
for ($i = 0; $i < 300; $i++) $values[] = rnd_value(4);
file_put_contents($argv[1], '<?php return ' . var_export($values, true) . ';' . PHP_EOL);
dump('', $values);
`

// TestParseCacheRoundTripsVarExport checks the cache reading against PHP's own
// var_export of random values: every string byte, int edge, float bit
// pattern and key form must come back exactly.
func TestParseCacheRoundTripsVarExport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs php")
	}
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "gen.php")
	if err := os.WriteFile(script, []byte(varExportScript), 0o600); err != nil {
		t.Fatal(err)
	}
	for seed := 1; seed <= 3; seed++ {
		cache := filepath.Join(dir, fmt.Sprintf("config%d.php", seed))
		out, err := exec.Command("php", script, cache, strconv.Itoa(seed)).Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		src, err := os.ReadFile(cache)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseCache("config.php", src)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		// The evaluator reads var_export output too: it is PHP.
		ev, err := EvalConfig("config.php", src, EvalContext{})
		if err != nil {
			t.Fatalf("seed %d: EvalConfig: %v", seed, err)
		}
		leaves := 0
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), "\t", 3)
			if len(parts) != 3 {
				t.Fatalf("bad dump line %q", sc.Text())
			}
			for _, root := range []*Value{v, ev} {
				got := lookupPath(t, root, parts[0])
				if msg := checkLeaf(got, parts[1], parts[2]); msg != "" {
					t.Errorf("seed %d %s: %s (got %+v)", seed, parts[0], msg, got)
				}
			}
			leaves++
		}
		if leaves < 300 {
			t.Fatalf("seed %d: only %d values dumped", seed, leaves)
		}
	}
}

// lookupPath follows ",base64key,base64key" with exact key matches.
func lookupPath(t *testing.T, v *Value, path string) *Value {
	if path == "" {
		return v
	}
	for _, k := range strings.Split(strings.TrimPrefix(path, ","), ",") {
		key, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			t.Fatal(err)
		}
		if v = v.entry(string(key)); v == nil {
			return nil
		}
	}
	return v
}

func checkLeaf(v *Value, typ, payload string) string {
	if v == nil {
		return "missing"
	}
	switch typ {
	case "array":
		if n, _ := strconv.Atoi(payload); v.Kind != KindArray || len(v.Entries) != n {
			return "want an array of " + payload
		}
	case "null":
		if v.Kind != KindNull {
			return "want null"
		}
	case "bool":
		if v.Kind != KindBool || v.Bool != (payload == "1") {
			return "want bool " + payload
		}
	case "int":
		if n, _ := strconv.ParseInt(payload, 10, 64); v.Kind != KindInt || v.Int != n {
			return "want int " + payload
		}
	case "float":
		b, _ := hex.DecodeString(payload)
		want := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if v.Kind != KindFloat || !(math.Float64bits(v.Float) == math.Float64bits(want) || math.IsNaN(want) && math.IsNaN(v.Float)) {
			return fmt.Sprintf("want float %v", want)
		}
	case "string":
		s, _ := base64.StdEncoding.DecodeString(payload)
		if v.Kind != KindString || v.Str != string(s) {
			return fmt.Sprintf("want string %q", s)
		}
	default:
		return "unknown dump type " + typ
	}
	return ""
}
