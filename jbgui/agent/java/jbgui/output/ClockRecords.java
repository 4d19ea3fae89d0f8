package jbgui.output;

import java.io.IOException;
import java.io.OutputStream;

import jbgui.runtime.EventLayout;

/**
 * Clock records {stream, position, nanos, flags} in one growable array, five longs a record (the
 * fifth, not written, is what EntryBlocks.clock's {@code loopExtra} was): the writer's own list. The writer runs on every chunk, and the JDK's collections it used
 * (ArrayList, HashMap with boxed keys, List.of) are instrumented like all JDK classes: C2
 * compiled them into the writer's hot methods with their probes (EntryBlocks.place 0.85 s,
 * TraceWriter.writeRecords 0.38 s of C2 in one JFR run of jEdit's start-up). Only the writer
 * thread uses it.
 */
final class ClockRecords {
    private static final int FIELDS = 5;
    private static final int WRITTEN_FIELDS = 4;
    private long[] a = new long[FIELDS * 16];
    private int n;

    int size() {
        return n;
    }

    boolean isEmpty() {
        return n == 0;
    }

    void clear() {
        n = 0;
    }

    void add(long stream, long position, long nanos, long flags) {
        add(stream, position, nanos, flags, EntryBlocks.UNKNOWN);
    }

    void add(long stream, long position, long nanos, long flags, long loopExtra) {
        if (FIELDS * (n + 1) > a.length) {
            a = java.util.Arrays.copyOf(a, a.length * 2);
        }
        int at = FIELDS * n++;
        a[at] = stream;
        a[at + 1] = position;
        a[at + 2] = nanos;
        a[at + 3] = flags;
        a[at + 4] = loopExtra;
    }

    /** Appends record {@code i} of {@code from}, its position moved by {@code shift}. */
    void addFrom(ClockRecords from, int i, long shift) {
        int at = FIELDS * i;
        add(from.a[at], from.a[at + 1] + shift, from.a[at + 2], from.a[at + 3], from.a[at + 4]);
    }

    long position(int i) {
        return a[FIELDS * i + 1];
    }

    long loopExtra(int i) {
        return a[FIELDS * i + 4];
    }

    /** Insertion sort by position, stable: the records mostly come in order. */
    void sortByPosition() {
        long[] r = new long[FIELDS];
        for (int i = 1; i < n; i++) {
            System.arraycopy(a, FIELDS * i, r, 0, FIELDS);
            int j = i - 1;
            while (j >= 0 && a[FIELDS * j + 1] > r[1]) {
                System.arraycopy(a, FIELDS * j, a, FIELDS * (j + 1), FIELDS);
                j--;
            }
            System.arraycopy(r, 0, a, FIELDS * (j + 1), FIELDS);
        }
    }

    /** Writes the records in clock.bin's layout (EventLayout.CLOCK_RECORD_SIZE bytes each) and clears them. */
    void writeTo(OutputStream out) throws IOException {
        if (n == 0) {
            return;
        }
        byte[] b = new byte[n * EventLayout.CLOCK_RECORD_SIZE];
        for (int i = 0; i < n; i++) {
            for (int f = 0; f < WRITTEN_FIELDS; f++) {
                Bytes.putLong(b, 8 * (WRITTEN_FIELDS * i + f), a[FIELDS * i + f]);
            }
        }
        out.write(b);
        n = 0;
    }
}
