package triage_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestRetryCountsDeleteWhenMissingModels: a retry counts the jobs whose
// payload has deleteWhenMissingModels true (Laravel 13 writes the key; a
// queued closure has it true), and only those.
func TestRetryCountsDeleteWhenMissingModels(t *testing.T) {
	store := triagetest.New(triage.IDModeUUID, time.UTC)
	body := func(extra string) string {
		return `{"uuid":"u","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,` +
			`"retryUntil":null` + extra + `,"data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}","batchId":null},"createdAt":1796040000,"delay":null}`
	}
	for i, extra := range []string{`,"deleteWhenMissingModels":true`, `,"deleteWhenMissingModels":false`, ``, `,"deleteWhenMissingModels":true`} {
		uuid := "13131313-0000-4000-8000-00000000000" + string(rune('1'+i))
		store.Add(triagetest.Row{UUID: uuid, Connection: "database", Queue: "default", Payload: body(extra),
			Exception: "RuntimeException: boom in /app/x.php:1", FailedAt: "2026-11-30 10:00:00"})
	}
	svc := &triage.Service{Store: store, Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }, Location: time.UTC}
	res, err := svc.Retry(context.Background(), triage.RetryParams{All: true, DryRun: true})
	if err != nil || res.Retried != 4 || res.DeleteWhenMissingModels != 2 {
		t.Fatalf("dry run: retried %d, deleteWhenMissingModels %d, %v; want 4 and 2", res.Retried, res.DeleteWhenMissingModels, err)
	}
}
