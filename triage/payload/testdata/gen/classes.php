<?php
// The application classes gen.php serializes; loaded after the autoloaders.

namespace App\Models {
    class Order extends \Illuminate\Database\Eloquent\Model
    {
        protected $table = 'orders';
    }
    class User extends \Illuminate\Database\Eloquent\Model
    {
        use \Illuminate\Notifications\Notifiable;
    }
}

namespace App\Jobs {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldBeEncrypted;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    class ProcessPodcast implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;
        public $tries = 3;
        public $timeout = 120;
        public $backoff = [10, 60];
        protected $podcastId;
        private $secret = 'héllo "quoted" ünïcode';
        public $order;
        public $orders;
        public $options = ['force' => true, 'ratio' => 0.5, 'tags' => ['a', 'b'], 7 => null];
        public function __construct($podcastId, $order, $orders)
        {
            $this->podcastId = $podcastId;
            $this->order = $order;
            $this->orders = $orders;
        }
    }

    class SendInvoice implements ShouldQueue, ShouldBeEncrypted
    {
        use InteractsWithQueue, Queueable, SerializesModels;
        public $invoiceId;
        public $retryUntilTs;
        public function __construct($invoiceId) { $this->invoiceId = $invoiceId; }
        public function retryUntil() { return 1893456000; }
    }
}

namespace App\Listeners {
    class SendShipmentNotification
    {
        public function handle($event) {}
    }
}

namespace App\Events {
    class OrderShipped
    {
        public $orderId = 1042;
    }
}

namespace App\Notifications {
    class InvoicePaid extends \Illuminate\Notifications\Notification
    {
        use \Illuminate\Bus\Queueable;
        public $amount = 99.95;
        public function via($notifiable) { return ['mail']; }
    }
}

namespace App\Mail {
    class OrderConfirmation extends \Illuminate\Mail\Mailable
    {
        public $orderId = 1042;
    }
}

