package jbgui.output;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

/**
 * The writer's queue never takes the program's park permit: a thread that was unparked (its
 * FutureTask done) and then, before it parks, hands events to a busy writer must still find the
 * permit there. A LinkedBlockingQueue in its place loses it whenever its locks are contended.
 */
class HandOffTest {
    @Test
    void producersKeepTheirParkPermit() throws Exception {
        HandOff queue = new HandOff();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong taken = new AtomicLong();
        AtomicLong added = new AtomicLong();
        Thread writer = new Thread(() -> {
            try {
                while (!done.get()) {
                    if (queue.poll(1) != null) {
                        taken.incrementAndGet();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        writer.start();
        // other recording threads handing events over at the same time (contention)
        Thread[] others = new Thread[3];
        for (int k = 0; k < others.length; k++) {
            others[k] = new Thread(() -> {
                for (int i = 0; i < 300_000 && !done.get(); i++) {
                    queue.add(k0());
                    added.incrementAndGet();
                }
            });
            others[k].start();
        }
        int lost = 0;
        for (int round = 0; round < 100; round++) {
            LockSupport.unpark(Thread.currentThread());     // the program's wake-up, already given
            for (int i = 0; i < 2_000; i++) {
                queue.add(i);
                added.incrementAndGet();
            }
            long began = System.nanoTime();
            LockSupport.parkNanos(2_000_000_000L);          // returns at once while the permit is there
            if (System.nanoTime() - began > 1_000_000_000L) {
                lost++;
            }
        }
        done.set(true);
        for (Thread other : others) {
            other.join();
        }
        writer.join();
        while (queue.poll() != null) {
            taken.incrementAndGet();
        }
        assertEquals(0, lost, "rounds whose park permit the queue used up");
        assertEquals(added.get(), taken.get(), "every item handed over comes out once");
    }

    private static Object k0() {
        return Boolean.TRUE;
    }

    @Test
    void aSleepingWriterWakesForAnItem() throws Exception {
        HandOff queue = new HandOff();
        Object[] got = new Object[1];
        Thread writer = new Thread(() -> {
            try {
                got[0] = queue.poll(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        writer.start();
        Thread.sleep(50);
        long began = System.nanoTime();
        queue.add("item");
        writer.join(5_000);
        assertEquals("item", got[0]);
        assertTrue(System.nanoTime() - began < 2_000_000_000L, "the writer slept through the item");
    }
}
