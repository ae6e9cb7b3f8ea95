<?php
// Generates the Laravel 8.83 fixtures used by triage/payload, triage/phpser and
// triage/exception tests. Run from the repository root:
//
//   php triage/payload/testdata/gen/gen.php
//
// It needs php8.2-cli, php8.2-sqlite3 and Debian's php-laravel-framework. The
// uuids, Redis ids and IVs are random, so re-running changes the bytes of the
// fixtures but not their shape; the tests only assert on stable parts.

namespace {
    require_once 'Illuminate/autoload.php';
    require_once 'Illuminate/Encryption/autoload.php';
    require_once 'Illuminate/Events/autoload.php';
    require_once 'Illuminate/Notifications/autoload.php';
    require_once 'Illuminate/Mail/autoload.php';
    require_once 'Illuminate/Bus/autoload.php';
    require_once 'Illuminate/Database/autoload.php';
    require_once __DIR__ . '/classes.php';

    use Illuminate\Container\Container;
    use Illuminate\Contracts\Encryption\Encrypter as EncrypterContract;
    use Illuminate\Encryption\Encrypter;

    // Exposes Queue::createPayload (protected) without a backend.
    class PayloadMaker extends \Illuminate\Queue\NullQueue
    {
        public function make($job, $queue = 'default', $data = '')
        {
            return $this->createPayload($job, $queue, $data);
        }
    }

    // A RedisQueue that never talks to Redis: only createPayloadArray (which
    // appends id and attempts) is exercised.
    class RedisPayloadMaker extends \Illuminate\Queue\RedisQueue
    {
        public function __construct() {}
        public function make($job, $queue = 'default', $data = '')
        {
            return $this->createPayload($job, $queue, $data);
        }
    }

    $root = getcwd() . '/triage';
    $payloadDir = "$root/payload/testdata";
    $phpserDir = "$root/phpser/testdata";
    $exceptionDir = "$root/exception/testdata";

    $container = new Container();
    Container::setInstance($container);

    $maker = new PayloadMaker();
    $maker->setContainer($container);
    $redisMaker = new RedisPayloadMaker();
    $redisMaker->setContainer($container);

    $order = (new \App\Models\Order())->forceFill(['id' => 1042]);
    $order->exists = true;
    $orders = new \Illuminate\Database\Eloquent\Collection();
    foreach ([1, 2, 3] as $id) {
        $o = (new \App\Models\Order())->forceFill(['id' => $id]);
        $o->exists = true;
        $orders->push($o);
    }
    $user = (new \App\Models\User())->forceFill(['id' => 5]);
    $user->exists = true;

    $write = function ($path, $contents) {
        file_put_contents($path, $contents);
        fwrite(STDERR, "wrote $path\n");
    };

    // Object job, database and redis flavours.
    $job = new \App\Jobs\ProcessPodcast(7, $order, $orders);
    $job->onQueue('podcasts');
    $objectPayload = $maker->make($job, 'podcasts');
    $write("$payloadDir/object_job.json", $objectPayload);
    $write("$payloadDir/object_job_redis.json", $redisMaker->make($job, 'podcasts'));
    $write("$phpserDir/object_job.ser", json_decode($objectPayload, true)['data']['command']);

    // String job.
    $write("$payloadDir/string_job.json", $maker->make('App\Jobs\LegacyHandler@handle', 'default', ['user_id' => 5, 'note' => 'a/b']));

    // Queued closure.
    $closure = \Illuminate\Queue\CallQueuedClosure::create(function () use ($order) {
        return $order->id;
    });
    $closurePayload = $maker->make($closure);
    $write("$payloadDir/closure.json", $closurePayload);
    $write("$phpserDir/closure.ser", json_decode($closurePayload, true)['data']['command']);

    // Queued listener.
    $listener = new \Illuminate\Events\CallQueuedListener(\App\Listeners\SendShipmentNotification::class, 'handle', [new \App\Events\OrderShipped()]);
    $listenerPayload = $maker->make($listener);
    $write("$payloadDir/listener.json", $listenerPayload);
    $write("$phpserDir/listener.ser", json_decode($listenerPayload, true)['data']['command']);

    // Notification.
    $notification = new \Illuminate\Notifications\SendQueuedNotifications(new \Illuminate\Database\Eloquent\Collection([$user]), new \App\Notifications\InvoicePaid(), ['mail']);
    $notificationPayload = $maker->make($notification);
    $write("$payloadDir/notification.json", $notificationPayload);
    $write("$phpserDir/notification.ser", json_decode($notificationPayload, true)['data']['command']);

    // Mailable.
    $mailable = new \Illuminate\Mail\SendQueuedMailable(new \App\Mail\OrderConfirmation());
    $write("$payloadDir/mailable.json", $maker->make($mailable));

    // Encrypted jobs, one per cipher. The keys are fixed so tests can decrypt.
    $keys = [
        'aes-256-cbc' => 'base64:' . base64_encode(str_repeat("\x01\x02\x03\x04", 8)),
        'aes-128-cbc' => 'base64:' . base64_encode(str_repeat("\x05\x06\x07\x08", 4)),
        'aes-256-gcm' => 'base64:' . base64_encode(str_repeat("\x09\x0a\x0b\x0c", 8)),
    ];
    $vectors = [];
    foreach ($keys as $cipher => $appKey) {
        $encrypter = new Encrypter(base64_decode(substr($appKey, 7)), $cipher);
        $container->instance(EncrypterContract::class, $encrypter);
        $p = $maker->make(new \App\Jobs\SendInvoice(31337));
        $name = 'encrypted_' . str_replace('-', '_', $cipher) . '.json';
        $write("$payloadDir/$name", $p);
        $vectors[] = ['file' => $name, 'cipher' => $cipher, 'app_key' => $appKey, 'plain' => serialize(new \App\Jobs\SendInvoice(31337))];
        $container->forgetInstance(EncrypterContract::class);
    }
    $write("$payloadDir/encrypted_keys.json", json_encode($vectors, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");

    // Exceptions: real (string)$e texts.
    $throwIn = function (callable $fn) {
        try {
            $fn();
        } catch (\Throwable $e) {
            return (string) $e;
        }
        throw new \LogicException('no exception thrown');
    };
    $call = function (callable $fn) use ($container) {
        return $container->call($fn);
    };

    $write("$exceptionDir/chained.txt", $throwIn(function () use ($call) {
        $call(function () {
            try {
                throw new \LogicException('inner');
            } catch (\LogicException $e) {
                throw new \RuntimeException('Podcast service unavailable', 0, $e);
            }
        });
    }));

    $write("$exceptionDir/empty_message.txt", $throwIn(function () use ($call) {
        $call(function () {
            throw new \RuntimeException();
        });
    }));

    $write("$exceptionDir/multiline.txt", $throwIn(function () use ($call) {
        $call(function () {
            throw new \InvalidArgumentException("Validation failed:\n - email is required\n - name is too long\n\nPlease fix the input.");
        });
    }));

    $write("$exceptionDir/max_attempts.txt", $throwIn(function () use ($call) {
        $call(function () {
            throw new \Illuminate\Queue\MaxAttemptsExceededException('App\Jobs\ProcessPodcast has been attempted too many times or run too long. The job may have previously timed out.');
        });
    }));

    $write("$exceptionDir/model_not_found.txt", $throwIn(function () use ($call) {
        $call(function () {
            throw (new \Illuminate\Database\Eloquent\ModelNotFoundException())->setModel(\App\Models\Order::class, [1042]);
        });
    }));

    // A real QueryException chained to a real PDOException from SQLite, thrown
    // from inside the framework (vendor frames).
    $capsule = new \Illuminate\Database\Capsule\Manager($container);
    $capsule->addConnection(['driver' => 'sqlite', 'database' => ':memory:']);
    $write("$exceptionDir/query_exception.txt", $throwIn(function () use ($capsule) {
        $capsule->getConnection()->table('orders')->where('id', 1042)->first();
    }));

    $write("$exceptionDir/three_chain.txt", $throwIn(function () {
        try {
            try {
                throw new \DomainException('level one');
            } catch (\Exception $e) {
                throw new \UnexpectedValueException('level two', 2, $e);
            }
        } catch (\Exception $e) {
            throw new \RuntimeException("level three\nwith a second line", 3, $e);
        }
    }));

    // An internal-function frame, and a message that itself contains " in file:line".
    $write("$exceptionDir/internal_frame.txt", $throwIn(function () {
        array_map(function ($id) {
            throw new \RuntimeException("Order $id not found in /var/www/app/Orders.php:12 (cache miss)");
        }, [1042]);
    }));
}
