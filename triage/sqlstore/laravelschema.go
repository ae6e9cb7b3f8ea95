package sqlstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// SchemaVariant picks which era of Laravel's failed_jobs to create.
type SchemaVariant int

const (
	// SchemaLaravel8 is the 8.0–12.x stub: a NOT NULL unique uuid column.
	SchemaLaravel8 SchemaVariant = iota
	// SchemaUpgradedFrom7 is an app upgraded per the 8.0 guide: uuid nullable.
	SchemaUpgradedFrom7
	// SchemaLegacy is the ≤7.x table: no uuid column, integer ids.
	SchemaLegacy
)

// LaravelDDL returns the statements Laravel 8.83's schema builder runs for
// jobs, failed_jobs and job_batches on the given driver (copied from the
// generated DDL in shared/laravel/queue-spec.md §1.4). It serves the demo
// database and the tests; jobtriage never changes an application's schema.
func LaravelDDL(driver string, v SchemaVariant) ([]string, error) {
	var jobs, failed, batches []string
	switch driver {
	case "mysql":
		jobs = []string{"create table `jobs` (`id` bigint unsigned not null auto_increment primary key, `queue` varchar(255) not null, `payload` longtext not null, `attempts` tinyint unsigned not null, `reserved_at` int unsigned null, `available_at` int unsigned not null, `created_at` int unsigned not null) default character set utf8mb4 collate 'utf8mb4_unicode_ci'",
			"alter table `jobs` add index `jobs_queue_index`(`queue`)"}
		uuid := map[SchemaVariant]string{SchemaLaravel8: "`uuid` varchar(255) not null, ", SchemaUpgradedFrom7: "`uuid` varchar(255) null, "}[v] // legacy: none
		failed = []string{"create table `failed_jobs` (`id` bigint unsigned not null auto_increment primary key, " + uuid + "`connection` text not null, `queue` text not null, `payload` longtext not null, `exception` longtext not null, `failed_at` timestamp default CURRENT_TIMESTAMP not null) default character set utf8mb4 collate 'utf8mb4_unicode_ci'"}
		if v != SchemaLegacy {
			failed = append(failed, "alter table `failed_jobs` add unique `failed_jobs_uuid_unique`(`uuid`)")
		}
		batches = []string{"create table `job_batches` (`id` varchar(255) not null, `name` varchar(255) not null, `total_jobs` int not null, `pending_jobs` int not null, `failed_jobs` int not null, `failed_job_ids` text not null, `options` mediumtext null, `cancelled_at` int null, `created_at` int not null, `finished_at` int null, primary key (`id`)) default character set utf8mb4 collate 'utf8mb4_unicode_ci'"}
	case "postgres":
		jobs = []string{`create table "jobs" ("id" bigserial primary key not null, "queue" varchar(255) not null, "payload" text not null, "attempts" smallint not null, "reserved_at" integer null, "available_at" integer not null, "created_at" integer not null)`,
			`create index "jobs_queue_index" on "jobs" ("queue")`}
		uuid := map[SchemaVariant]string{SchemaLaravel8: `"uuid" varchar(255) not null, `, SchemaUpgradedFrom7: `"uuid" varchar(255) null, `}[v] // legacy: none
		failed = []string{`create table "failed_jobs" ("id" bigserial primary key not null, ` + uuid + `"connection" text not null, "queue" text not null, "payload" text not null, "exception" text not null, "failed_at" timestamp(0) without time zone default CURRENT_TIMESTAMP not null)`}
		if v != SchemaLegacy {
			failed = append(failed, `alter table "failed_jobs" add constraint "failed_jobs_uuid_unique" unique ("uuid")`)
		}
		batches = []string{`create table "job_batches" ("id" varchar(255) not null, "name" varchar(255) not null, "total_jobs" integer not null, "pending_jobs" integer not null, "failed_jobs" integer not null, "failed_job_ids" text not null, "options" text null, "cancelled_at" integer null, "created_at" integer not null, "finished_at" integer null)`,
			`alter table "job_batches" add primary key ("id")`}
	case "sqlite":
		jobs = []string{`create table "jobs" ("id" integer not null primary key autoincrement, "queue" varchar not null, "payload" text not null, "attempts" integer not null, "reserved_at" integer, "available_at" integer not null, "created_at" integer not null)`,
			`create index "jobs_queue_index" on "jobs" ("queue")`}
		uuid := map[SchemaVariant]string{SchemaLaravel8: `"uuid" varchar not null, `, SchemaUpgradedFrom7: `"uuid" varchar, `}[v] // legacy: none
		failed = []string{`create table "failed_jobs" ("id" integer not null primary key autoincrement, ` + uuid + `"connection" text not null, "queue" text not null, "payload" text not null, "exception" text not null, "failed_at" datetime default CURRENT_TIMESTAMP not null)`}
		if v != SchemaLegacy {
			failed = append(failed, `create unique index "failed_jobs_uuid_unique" on "failed_jobs" ("uuid")`)
		}
		batches = []string{`create table "job_batches" ("id" varchar not null, "name" varchar not null, "total_jobs" integer not null, "pending_jobs" integer not null, "failed_jobs" integer not null, "failed_job_ids" text not null, "options" text, "cancelled_at" integer, "created_at" integer not null, "finished_at" integer, primary key ("id"))`}
	default:
		return nil, fmt.Errorf("no Laravel DDL for driver %q", driver)
	}
	return append(append(jobs, failed...), batches...), nil
}

func CreateLaravelSchema(ctx context.Context, db *sqlx.DB, driver string, v SchemaVariant) error {
	stmts, err := LaravelDDL(driver, v)
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("creating Laravel schema: %w", err)
		}
	}
	return nil
}
