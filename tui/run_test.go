package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestRunQuitsOnQ(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := Run(ctx, seed(), nil, Options{Now: fixedNow, NoColor: true}, strings.NewReader("q"), &out)
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run did not stop on q")
	}
}

func TestRunWithoutBackend(t *testing.T) {
	if err := Run(context.Background(), nil, nil, Options{}, strings.NewReader(""), &bytes.Buffer{}); err == nil {
		t.Fatal("Run accepted a nil backend")
	}
}
