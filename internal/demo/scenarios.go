package demo

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// facts are a row's random choices, drawn first so that the row can be
// rebuilt (to reach a target size) without drawing again.
type facts struct {
	uuid     string
	redisID  string
	id       int64 // the model / order / invoice id the failure is about
	n        int64 // a second varying number (milliseconds, amounts)
	pick     int   // picks among small fixed lists
	failedAt time.Time
	iv       []byte
	mw       int // job middlewares in the trace
	key      []byte
}

// jobMeta are the envelope keys between "job" and "data".
type jobMeta struct {
	maxTries, maxExceptions, timeout *int64
	failOnTimeout                    bool
	backoff                          *string
	retryUntil                       *int64
}

func i64(v int64) *int64   { return &v }
func str(v string) *string { return &v }

// objectPayload renders Laravel 8.83's Queue::createObjectPayload JSON,
// plus RedisQueue's "id" and "attempts" for redis.
func objectPayload(f *facts, displayName, commandName, command string, m jobMeta, redis bool) string {
	var b strings.Builder
	b.Grow(len(command) + len(command)/6 + 400)
	b.WriteString(`{"uuid":` + phpJSONString(f.uuid))
	b.WriteString(`,"displayName":` + phpJSONString(displayName))
	b.WriteString(`,"job":"Illuminate\\Queue\\CallQueuedHandler@call"`)
	b.WriteString(`,"maxTries":` + jsonNullableInt(m.maxTries))
	b.WriteString(`,"maxExceptions":` + jsonNullableInt(m.maxExceptions))
	b.WriteString(`,"failOnTimeout":` + strconv.FormatBool(m.failOnTimeout))
	b.WriteString(`,"backoff":`)
	if m.backoff == nil {
		b.WriteString("null")
	} else {
		b.WriteString(phpJSONString(*m.backoff))
	}
	b.WriteString(`,"timeout":` + jsonNullableInt(m.timeout))
	b.WriteString(`,"retryUntil":` + jsonNullableInt(m.retryUntil))
	b.WriteString(`,"data":{"commandName":` + phpJSONString(commandName) + `,"command":` + phpJSONString(command) + `}`)
	if redis {
		b.WriteString(`,"id":` + phpJSONString(f.redisID) + `,"attempts":0`)
	}
	b.WriteString("}")
	return b.String()
}

// padEntry is a padding line: a fixed-width ASCII order line, of
// predictable encoded size.
func padEntry(f *facts, j int) string {
	whs := [...]string{"JKT-1", "SUB-2", "KBP-3", "LWO-4"}
	return fmt.Sprintf("line %04d: sku=SKU-%06d qty=%03d warehouse=%s status=backordered", j, (f.id*31+int64(j)*7)%1000000, (int64(j)+f.n)%1000, whs[(j+f.pick)%len(whs)])
}

func padList(f *facts, k int) string {
	vals := make([]string, k)
	for j := range vals {
		vals[j] = serStr(padEntry(f, j))
	}
	return serList(vals)
}

// scenario is a kind of failure: a job class failing one way on one
// connection and queue.
type scenario struct {
	name           string
	connection     string
	queue          string
	class          string // what triage/payload.JobClass reports
	exceptionClass string // the top (thrown) exception class
	weight         int
	encrypted      bool
	stringJob      bool
	payload        func(f *facts, k int) (string, error) // with k padding lines
	exception      func(f *facts, mw int) []thrown       // with mw job middlewares
}

// Scenario names, for Options.Scenarios.
const (
	ScenarioModelNotFound = "model-not-found"
	ScenarioDeadlock      = "sql-deadlock"
	ScenarioCurlTimeout   = "curl-timeout"
	ScenarioListenerMail  = "listener-smtp"
	ScenarioNotification  = "notification-dns"
	ScenarioClosure       = "closure"
	ScenarioEncrypted     = "encrypted-disk-full"
	ScenarioStringJob     = "string-job"
	ScenarioRetryUntil    = "retry-until-expired"
	ScenarioTimeout       = "timeout-max-attempts"
)

func scenarios() []scenario {
	return []scenario{
		{name: ScenarioModelNotFound, connection: "database", queue: "podcasts", weight: 20,
			class: `App\Jobs\ProcessPodcast`, exceptionClass: `Illuminate\Database\Eloquent\ModelNotFoundException`,
			payload: func(f *facts, k int) (string, error) {
				cmd := serObject(`App\Jobs\ProcessPodcast`, append([]prop{
					{"tries", serInt(3)},
					{"timeout", serInt(120)},
					{"backoff", serList([]string{serInt(10), serInt(60)})},
					{protected("podcastId"), serInt(f.id)},
					{private(`App\Jobs\ProcessPodcast`, "episodeTitle"), serStr(fmt.Sprintf("Episode %d — “Ngobrol santai”", f.n%300))},
					{"context", padList(f, k)},
				}, queueableProps(true, "podcasts")...))
				return objectPayload(f, `App\Jobs\ProcessPodcast`, `App\Jobs\ProcessPodcast`, cmd,
					jobMeta{maxTries: i64(3), backoff: str("10,60"), timeout: i64(120)}, false), nil
			},
			exception: func(f *facts, mw int) []thrown {
				lead := []frame{
					vendorFrame("Support/Traits/ForwardsCalls.php", 23, `Illuminate\Database\Eloquent\Builder->findOrFail()`),
					vendorFrame("Database/Eloquent/Model.php", 2132, `Illuminate\Database\Eloquent\Model->forwardCallTo()`),
					vendorFrame("Database/Eloquent/Model.php", 2144, `Illuminate\Database\Eloquent\Model->__call()`),
					appFrame("app/Jobs/ProcessPodcast.php", 41, `Illuminate\Database\Eloquent\Model::__callStatic()`),
				}
				return []thrown{{class: `Illuminate\Database\Eloquent\ModelNotFoundException`,
					message: fmt.Sprintf(`No query results for model [App\Models\Podcast] %d`, f.id),
					file:    vendorRoot + "Database/Eloquent/Builder.php", line: 444,
					frames: jobTrace(lead, `App\Jobs\ProcessPodcast->handle()`, mw)}}
			}},
		{name: ScenarioDeadlock, connection: "database", queue: "default", weight: 15,
			class: `App\Jobs\SyncInvoice`, exceptionClass: `Illuminate\Database\QueryException`,
			payload: func(f *facts, k int) (string, error) {
				cmd := serObject(`App\Jobs\SyncInvoice`, append([]prop{
					{"tries", serInt(5)},
					{"invoice", modelIdentifier(`App\Models\Invoice`, f.id, "mysql")},
					{"context", padList(f, k)},
				}, queueableProps(true, "")...))
				return objectPayload(f, `App\Jobs\SyncInvoice`, `App\Jobs\SyncInvoice`, cmd,
					jobMeta{maxTries: i64(5), backoff: str("5")}, false), nil
			},
			exception: func(f *facts, mw int) []thrown {
				const deadlock = "SQLSTATE[40001]: Serialization failure: 1213 Deadlock found when trying to get lock; try restarting transaction"
				ts := f.failedAt.Add(-time.Duration(f.n%50) * time.Second).Format(wallLayout)
				sql := fmt.Sprintf("update `invoices` set `status` = synced, `synced_at` = %s, `invoices`.`updated_at` = %s where `id` = %d", ts, ts, f.id)
				db := []frame{
					vendorFrame("Database/Connection.php", 705, `Illuminate\Database\Connection->Illuminate\Database\{closure}()`),
					vendorFrame("Database/Connection.php", 672, `Illuminate\Database\Connection->runQueryCallback()`),
					vendorFrame("Database/Connection.php", 530, `Illuminate\Database\Connection->run()`),
					vendorFrame("Database/Connection.php", 467, `Illuminate\Database\Connection->affectingStatement()`),
					vendorFrame("Database/Query/Builder.php", 3011, `Illuminate\Database\Connection->update()`),
					vendorFrame("Database/Eloquent/Builder.php", 885, `Illuminate\Database\Query\Builder->update()`),
					vendorFrame("Database/Eloquent/Model.php", 1018, `Illuminate\Database\Eloquent\Builder->update()`),
					vendorFrame("Database/Eloquent/Model.php", 929, `Illuminate\Database\Eloquent\Model->performUpdate()`),
					appFrame("app/Jobs/SyncInvoice.php", 52, `Illuminate\Database\Eloquent\Model->save()`),
				}
				inner := append([]frame{vendorFrame("Database/Connection.php", 526, `PDOStatement->execute()`)}, db...)
				return []thrown{
					{class: "PDOException", message: deadlock, file: vendorRoot + "Database/Connection.php", line: 526,
						frames: jobTrace(inner, `App\Jobs\SyncInvoice->handle()`, mw)},
					{class: `Illuminate\Database\QueryException`, message: deadlock + " (SQL: " + sql + ")",
						file: vendorRoot + "Database/Connection.php", line: 712,
						frames: jobTrace(db[1:], `App\Jobs\SyncInvoice->handle()`, mw)},
				}
			}},
		{name: ScenarioCurlTimeout, connection: "redis", queue: "payments", weight: 15,
			class: `App\Jobs\ChargeCard`, exceptionClass: `GuzzleHttp\Exception\ConnectException`,
			payload: func(f *facts, k int) (string, error) {
				currencies := [...]string{"IDR", "UAH", "EUR", "USD"}
				cmd := serObject(`App\Jobs\ChargeCard`, append([]prop{
					{"tries", serInt(1)},
					{"orderId", serInt(f.id)},
					{"amountCents", serInt(100 + f.n*37%500000)},
					{"currency", serStr(currencies[f.pick%len(currencies)])},
					{"description", serStr(fmt.Sprintf("Оплата замовлення #%d / Pembayaran pesanan", f.id))},
					{"context", padList(f, k)},
				}, queueableProps(true, "payments")...))
				return objectPayload(f, `App\Jobs\ChargeCard`, `App\Jobs\ChargeCard`, cmd, jobMeta{maxTries: i64(1)}, true), nil
			},
			exception: func(f *facts, mw int) []thrown {
				g := frameIn(appRoot + "vendor/guzzlehttp/guzzle/src/")
				p := frameIn(appRoot + "vendor/guzzlehttp/promises/src/")
				lead := []frame{
					g("Handler/CurlFactory.php", 158, `GuzzleHttp\Handler\CurlFactory::createRejection()`),
					g("Handler/CurlFactory.php", 110, `GuzzleHttp\Handler\CurlFactory::finishError()`),
					g("Handler/CurlHandler.php", 47, `GuzzleHttp\Handler\CurlFactory::finish()`),
					g("Handler/Proxy.php", 28, `GuzzleHttp\Handler\CurlHandler->__invoke()`),
					g("Handler/Proxy.php", 51, `GuzzleHttp\Handler\Proxy::GuzzleHttp\Handler\{closure}()`),
					g("PrepareBodyMiddleware.php", 37, `GuzzleHttp\Handler\Proxy::GuzzleHttp\Handler\{closure}()`),
					g("Middleware.php", 29, `GuzzleHttp\PrepareBodyMiddleware->__invoke()`),
					g("RedirectMiddleware.php", 71, `GuzzleHttp\Middleware::GuzzleHttp\{closure}()`),
					g("Middleware.php", 63, `GuzzleHttp\RedirectMiddleware->__invoke()`),
					g("HandlerStack.php", 75, `GuzzleHttp\Middleware::GuzzleHttp\{closure}()`),
					g("Client.php", 331, `GuzzleHttp\HandlerStack->__invoke()`),
					g("Client.php", 168, `GuzzleHttp\Client->transfer()`),
					g("Client.php", 187, `GuzzleHttp\Client->requestAsync()`),
					p("Promise.php", 62, `GuzzleHttp\Client->request()`),
					appFrame("app/Services/Payments/Gateway.php", 64, `GuzzleHttp\Client->post()`),
					appFrame("app/Jobs/ChargeCard.php", 38, `App\Services\Payments\Gateway->charge()`),
				}
				msg := fmt.Sprintf("cURL error 28: Operation timed out after %d milliseconds with %d bytes received (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for https://api.payments.example.test/v1/charges", 30000+f.id%997, f.n%3*512)
				return []thrown{{class: `GuzzleHttp\Exception\ConnectException`, message: msg,
					file: appRoot + "vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php", line: 210,
					frames: jobTrace(lead, `App\Jobs\ChargeCard->handle()`, mw)}}
			}},
		{name: ScenarioListenerMail, connection: "redis", queue: "emails", weight: 10,
			class: `App\Listeners\SendShipmentNotification`, exceptionClass: "Swift_TransportException",
			payload: func(f *facts, k int) (string, error) {
				carriers := [...]string{"JNE", "Nova Poshta", "SiCepat", "Ukrposhta"}
				event := serObject(`App\Events\OrderShipped`, []prop{
					{"orderId", serInt(f.id)},
					{"carrier", serStr(carriers[f.pick%len(carriers)])},
					{"context", padList(f, k)},
				})
				cmd := serObject(`Illuminate\Events\CallQueuedListener`, append([]prop{
					{"class", serStr(`App\Listeners\SendShipmentNotification`)},
					{"method", serStr("handle")},
					{"data", serList([]string{event})},
					{"tries", serNull}, {"maxExceptions", serNull}, {"backoff", serNull},
					{"retryUntil", serNull}, {"timeout", serNull}, {"shouldBeEncrypted", serBool(false)},
				}, queueableProps(true, "emails")...))
				return objectPayload(f, `App\Listeners\SendShipmentNotification`, `Illuminate\Events\CallQueuedListener`, cmd, jobMeta{}, true), nil
			},
			exception: func(f *facts, mw int) []thrown {
				s := frameIn(appRoot + "vendor/swiftmailer/swiftmailer/lib/classes/Swift/")
				lead := []frame{
					s("Transport/AbstractSmtpTransport.php", 341, `Swift_Transport_AbstractSmtpTransport->assertResponseCode()`),
					s("Transport/EsmtpTransport.php", 305, `Swift_Transport_AbstractSmtpTransport->executeCommand()`),
					s("Transport/AbstractSmtpTransport.php", 392, `Swift_Transport_EsmtpTransport->executeCommand()`),
					s("Transport/AbstractSmtpTransport.php", 500, `Swift_Transport_AbstractSmtpTransport->doRcptToCommand()`),
					s("Transport/AbstractSmtpTransport.php", 183, `Swift_Transport_AbstractSmtpTransport->sendTo()`),
					s("Mailer.php", 71, `Swift_Transport_AbstractSmtpTransport->send()`),
					vendorFrame("Mail/Mailer.php", 521, `Swift_Mailer->send()`),
					vendorFrame("Mail/Mailer.php", 288, `Illuminate\Mail\Mailer->sendSwiftMessage()`),
					appFrame("app/Listeners/SendShipmentNotification.php", 34, `Illuminate\Mail\Mailer->send()`),
					vendorFrame("Events/CallQueuedListener.php", 107, `App\Listeners\SendShipmentNotification->handle()`),
				}
				// SwiftMailer keeps the server's CRLF at the end of the message.
				msg := fmt.Sprintf("Expected response code 250/251/252 but got code \"554\", with message \"554 5.7.1 <buyer%d@example.test>: Relay access denied\r\n\"", f.id)
				return []thrown{{class: "Swift_TransportException", message: msg,
					file: appRoot + "vendor/swiftmailer/swiftmailer/lib/classes/Swift/Transport/AbstractSmtpTransport.php", line: 457,
					frames: jobTrace(lead, `Illuminate\Events\CallQueuedListener->handle()`, mw)}}
			}},
		{name: ScenarioNotification, connection: "database", queue: "emails", weight: 10,
			class: `App\Notifications\InvoicePaid`, exceptionClass: `Illuminate\Http\Client\ConnectionException`,
			payload: func(f *facts, k int) (string, error) {
				notification := serObject(`App\Notifications\InvoicePaid`, append([]prop{
					{"amount", serFloat(float64(f.n%100000) / 100)},
					{"context", padList(f, k)},
					{"id", serStr(uuidFrom(f.iv))},
					{"locale", serNull},
				}, queueableProps(false, "emails")...))
				cmd := serObject(`Illuminate\Notifications\SendQueuedNotifications`, append([]prop{
					{"notifiables", modelIdentifier(`App\Models\User`, f.id%5000+1, "mysql")},
					{"notification", notification},
					{"channels", serList([]string{serStr(`App\Notifications\Channels\SlackWebhookChannel`)})},
					{"tries", serNull}, {"timeout", serNull}, {"shouldBeEncrypted", serBool(false)},
				}, queueableProps(true, "emails")...))
				return objectPayload(f, `App\Notifications\InvoicePaid`, `Illuminate\Notifications\SendQueuedNotifications`, cmd, jobMeta{}, false), nil
			},
			exception: func(f *facts, mw int) []thrown {
				lead := []frame{
					vendorFrame("Http/Client/PendingRequest.php", 608, `Illuminate\Http\Client\PendingRequest->Illuminate\Http\Client\{closure}()`),
					vendorFrame("Support/helpers.php", 234, `Illuminate\Http\Client\PendingRequest->Illuminate\Http\Client\{closure}()`),
					vendorFrame("Http/Client/PendingRequest.php", 719, `retry()`),
					vendorFrame("Http/Client/PendingRequest.php", 576, `Illuminate\Http\Client\PendingRequest->send()`),
					appFrame("app/Notifications/Channels/SlackWebhookChannel.php", 28, `Illuminate\Http\Client\PendingRequest->post()`),
					vendorFrame("Notifications/NotificationSender.php", 148, `App\Notifications\Channels\SlackWebhookChannel->send()`),
					vendorFrame("Notifications/NotificationSender.php", 106, `Illuminate\Notifications\NotificationSender->sendToNotifiable()`),
					vendorFrame("Support/Traits/Localizable.php", 19, `Illuminate\Notifications\NotificationSender->Illuminate\Notifications\{closure}()`),
					vendorFrame("Notifications/NotificationSender.php", 109, `Illuminate\Notifications\NotificationSender->withLocale()`),
					vendorFrame("Notifications/ChannelManager.php", 54, `Illuminate\Notifications\NotificationSender->sendNow()`),
					vendorFrame("Notifications/SendQueuedNotifications.php", 104, `Illuminate\Notifications\ChannelManager->sendNow()`),
				}
				msg := "cURL error 6: Could not resolve host: hooks.slack.com (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for https://hooks.slack.com/services/T0DEMO/B0DEMO/placeholder"
				return []thrown{{class: `Illuminate\Http\Client\ConnectionException`, message: msg,
					file: vendorRoot + "Http/Client/PendingRequest.php", line: 711,
					frames: jobTrace(lead, `Illuminate\Notifications\SendQueuedNotifications->handle()`, mw)}}
			}},
		{name: ScenarioClosure, connection: "database", queue: "default", weight: 5,
			class: `Closure (web.php:58)`, exceptionClass: "RuntimeException",
			payload: func(f *facts, k int) (string, error) {
				native := serObject(`Laravel\SerializableClosure\Serializers\Native`, []prop{
					{"use", serMap([]prop{{"merchantId", serInt(f.id)}, {"context", padList(f, k)}})},
					{"function", serStr(closureSource)},
					{"scope", serNull},
					{"this", serNull},
					{"self", serStr(fmt.Sprintf("%032x", f.n))},
				})
				signed := serObject(`Laravel\SerializableClosure\Serializers\Signed`, []prop{
					{"serializable", serStr(native)},
					{"hash", serStr(closureSignature(native, f.key))},
				})
				cmd := serObject(`Illuminate\Queue\CallQueuedClosure`, append([]prop{
					{"closure", serObject(`Laravel\SerializableClosure\SerializableClosure`, []prop{{"serializable", signed}})},
					{"failureCallbacks", "a:0:{}"},
					{"deleteWhenMissingModels", serBool(true)},
					{"batchId", serNull},
				}, queueableProps(true, "")...))
				return objectPayload(f, `Closure (web.php:58)`, `Illuminate\Queue\CallQueuedClosure`, cmd, jobMeta{}, false), nil
			},
			exception: func(f *facts, mw int) []thrown {
				lead := []frame{
					vendorFrame("Container/BoundMethod.php", 36, "{closure}()"),
					vendorFrame("Container/Util.php", 40, `Illuminate\Container\BoundMethod::Illuminate\Container\{closure}()`),
					vendorFrame("Container/BoundMethod.php", 81, `Illuminate\Container\Util::unwrapIfClosure()`),
					vendorFrame("Container/BoundMethod.php", 35, `Illuminate\Container\BoundMethod::callBoundMethod()`),
					vendorFrame("Container/Container.php", 653, `Illuminate\Container\BoundMethod::call()`),
					vendorFrame("Queue/CallQueuedClosure.php", 68, `Illuminate\Container\Container->call()`),
				}
				// The file is the closure's whole source, over several lines.
				return []thrown{{class: "RuntimeException",
					message: fmt.Sprintf("Webhook replay for merchant %d failed: HTTP 502", f.id),
					file:    "laravel-serializable-closure://" + closureSource, line: 3,
					frames: jobTrace(lead, `Illuminate\Queue\CallQueuedClosure->handle()`, mw)}}
			}},
		{name: ScenarioEncrypted, connection: "database", queue: "default", weight: 8, encrypted: true,
			class: `App\Jobs\ExportCustomerData`, exceptionClass: "ErrorException",
			payload: func(f *facts, k int) (string, error) {
				inner := serObject(`App\Jobs\ExportCustomerData`, append([]prop{
					{"customerId", serInt(f.id)},
					{"email", serStr(fmt.Sprintf("pelanggan%d@example.test", f.id))},
					{"taxNumber", serStr(fmt.Sprintf("NPWP %02d.%03d.%03d.%d", f.n%100, f.id%1000, f.n%1000, f.pick))},
					{"context", padList(f, k)},
				}, queueableProps(true, "")...))
				enc, err := encryptCommand(inner, f.key, &fixedReader{b: f.iv})
				if err != nil {
					return "", err
				}
				return objectPayload(f, `App\Jobs\ExportCustomerData`, `App\Jobs\ExportCustomerData`, enc, jobMeta{}, false), nil
			},
			exception: func(f *facts, mw int) []thrown {
				day := f.failedAt.Format("2006-01-02")
				lead := []frame{
					"[internal function]: Illuminate\\Foundation\\Bootstrap\\HandleExceptions->handleError()",
					appFrame("app/Jobs/ExportCustomerData.php", 47, "fopen()"),
				}
				return []thrown{{class: "ErrorException",
					message: fmt.Sprintf("fopen(/var/www/app/storage/app/exports/customer-%d-%s.csv): Failed to open stream: No space left on device", f.id, day),
					file:    appRoot + "app/Jobs/ExportCustomerData.php", line: 47,
					frames: jobTrace(lead, `App\Jobs\ExportCustomerData->handle()`, mw)}}
			}},
		{name: ScenarioStringJob, connection: "database", queue: "default", weight: 5, stringJob: true,
			class: `App\Jobs\Legacy`, exceptionClass: "ErrorException",
			payload: func(f *facts, k int) (string, error) {
				var b strings.Builder
				b.WriteString(`{"uuid":` + phpJSONString(f.uuid) + `,"displayName":"App\\Jobs\\Legacy","job":"App\\Jobs\\Legacy@handle","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":{"record":`)
				b.WriteString(phpJSONString(fmt.Sprintf("R-%d", f.id)) + `,"source":"sftp:\/\/legacy.example.test\/inbox","lines":[`)
				for j := 0; j < k; j++ {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(phpJSONString(padEntry(f, j)))
				}
				b.WriteString("]}}")
				return b.String(), nil
			},
			exception: func(f *facts, mw int) []thrown {
				fs := []frame{
					appFrame("app/Jobs/Legacy.php", 22, `Illuminate\Foundation\Bootstrap\HandleExceptions->handleError()`),
					vendorFrame("Queue/Jobs/Job.php", 98, `App\Jobs\Legacy->handle()`),
				}
				fs = append(fs, workerFrames()...)
				return []thrown{{class: "ErrorException", message: `Undefined array key "customer_id"`,
					file: appRoot + "app/Jobs/Legacy.php", line: 22, frames: fs}}
			}},
		{name: ScenarioRetryUntil, connection: "redis", queue: "default", weight: 7,
			class: `App\Jobs\ImportFeed`, exceptionClass: `Illuminate\Queue\MaxAttemptsExceededException`,
			payload: func(f *facts, k int) (string, error) {
				until := f.failedAt.Unix() - 1 - f.n%3600
				cmd := serObject(`App\Jobs\ImportFeed`, append([]prop{
					{"feedUrl", serStr(fmt.Sprintf("https://feeds.example.test/katalog-%d.xml", f.id%40))},
					{"context", padList(f, k)},
				}, queueableProps(true, "")...))
				return objectPayload(f, `App\Jobs\ImportFeed`, `App\Jobs\ImportFeed`, cmd, jobMeta{retryUntil: i64(until)}, true), nil
			},
			exception: func(f *facts, mw int) []thrown {
				return []thrown{maxAttemptsBeforeRun(`App\Jobs\ImportFeed`)}
			}},
		{name: ScenarioTimeout, connection: "database", queue: "default", weight: 5,
			class: `App\Jobs\RenderReport`, exceptionClass: `Illuminate\Queue\MaxAttemptsExceededException`,
			payload: func(f *facts, k int) (string, error) {
				cmd := serObject(`App\Jobs\RenderReport`, append([]prop{
					{"tries", serInt(1)},
					{"timeout", serInt(60)},
					{"reportId", serInt(f.id)},
					{"format", serStr([...]string{"pdf", "xlsx", "csv"}[f.pick%3])},
					{"context", padList(f, k)},
				}, queueableProps(true, "")...))
				return objectPayload(f, `App\Jobs\RenderReport`, `App\Jobs\RenderReport`, cmd, jobMeta{maxTries: i64(1), timeout: i64(60)}, false), nil
			},
			exception: func(f *facts, mw int) []thrown {
				lead := []frame{
					vendorFrame("Queue/Worker.php", 213, `Illuminate\Queue\Worker->maxAttemptsExceededException()`),
					appFrame("app/Jobs/RenderReport.php", 31, `Illuminate\Queue\Worker->Illuminate\Queue\{closure}()`),
				}
				return []thrown{{class: `Illuminate\Queue\MaxAttemptsExceededException`,
					message: maxAttemptsMessage(`App\Jobs\RenderReport`),
					file:    vendorRoot + "Queue/Worker.php", line: 750,
					frames: jobTrace(lead, `App\Jobs\RenderReport->handle()`, mw)}}
			}},
	}
}

const closureSource = "function () use ($merchantId, $context) {\n" +
	"        $response = \\Illuminate\\Support\\Facades\\Http::timeout(10)->post(\"https://merchant.example.test/{$merchantId}/webhook\");\n" +
	"        if ($response->failed()) {\n" +
	"            throw new \\RuntimeException(\"Webhook replay for merchant {$merchantId} failed: HTTP {$response->status()}\");\n" +
	"        }\n" +
	"    }"

// fixedReader hands out a row's IV as often as the row is rebuilt.
type fixedReader struct{ b []byte }

func (r *fixedReader) Read(p []byte) (int, error) { return copy(p, r.b), nil }

// uuidFrom renders 16 bytes as a version-4 uuid, like Str::uuid().
func uuidFrom(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := fmt.Sprintf("%x", u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// wallLayout is how Laravel writes failed_at: Y-m-d H:i:s.
const wallLayout = "2006-01-02 15:04:05"
