import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Several threads at once, with a deterministic printed result: four named worker threads adding
 * into a synchronized total, a fixed thread pool of three named threads running ten tasks, and a
 * producer and a consumer handing items over through a bounded buffer with wait/notifyAll.
 *
 * Counts the recorder tests rely on: work() runs once on each of worker-0..worker-3 (4 calls),
 * task() runs 10 times on the threads pool-1..pool-3, produce() 200 times on "producer",
 * consume() 200 times on "consumer".
 */
public class Main {
    static long total;

    static synchronized void add(long value) {
        total += value;
    }

    static long work(int id) {
        long sum = 0;
        for (int i = id * 10_000; i < (id + 1) * 10_000; i++) {
            sum += i % 7;
        }
        add(sum);
        return sum;
    }

    static int task(int n) {
        int acc = 0;
        for (int i = 1; i <= n * 100; i++) {
            acc += i % 13;
        }
        return acc;
    }

    /** A bounded buffer built on the object monitor, as textbooks do it. */
    static final class Buffer {
        private final ArrayDeque<Integer> items = new ArrayDeque<>();
        private final int capacity;

        Buffer(int capacity) {
            this.capacity = capacity;
        }

        synchronized void put(int item) throws InterruptedException {
            while (items.size() == capacity) {
                wait();
            }
            items.addLast(item);
            notifyAll();
        }

        synchronized int take() throws InterruptedException {
            while (items.isEmpty()) {
                wait();
            }
            int item = items.removeFirst();
            notifyAll();
            return item;
        }
    }

    static void produce(Buffer buffer, int i) throws InterruptedException {
        buffer.put(i * i);
    }

    static long consume(Buffer buffer) throws InterruptedException {
        return buffer.take();
    }

    public static void main(String[] args) throws Exception {
        Thread[] workers = new Thread[4];
        for (int t = 0; t < workers.length; t++) {
            final int id = t;
            workers[t] = new Thread(() -> work(id), "worker-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        System.out.println("workers total = " + total);

        AtomicInteger poolThreads = new AtomicInteger();
        ThreadFactory named = r -> new Thread(r, "pool-" + poolThreads.incrementAndGet());
        ExecutorService pool = Executors.newFixedThreadPool(3, named);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int n = 1; n <= 10; n++) {
            final int arg = n;
            futures.add(pool.submit(() -> task(arg)));
        }
        long poolSum = 0;
        for (Future<Integer> f : futures) {
            poolSum += f.get();
        }
        pool.shutdown();
        System.out.println("pool terminated: " + pool.awaitTermination(30, TimeUnit.SECONDS) + ", sum = " + poolSum);

        Buffer buffer = new Buffer(4);
        long[] consumed = new long[1];
        Thread producer = new Thread(() -> {
            try {
                for (int i = 0; i < 200; i++) {
                    produce(buffer, i);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "producer");
        Thread consumer = new Thread(() -> {
            try {
                for (int i = 0; i < 200; i++) {
                    consumed[0] += consume(buffer);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "consumer");
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        System.out.println("consumed sum of squares 0..199 = " + consumed[0]);
    }
}
