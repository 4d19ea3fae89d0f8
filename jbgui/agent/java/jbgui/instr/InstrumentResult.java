package jbgui.instr;

import java.util.ArrayList;
import java.util.List;

/** The outcome of instrumenting one class. */
public final class InstrumentResult {
    /** The new class file, or null to leave the class as it was. */
    public byte[] bytes;
    /**
     * One complete {@code <class>} element for static.xml, produced by its {@code toString()}:
     * the writer thread calls it, so describing a class costs the program's threads nothing.
     */
    public Object xml;
    public boolean instrumented;
    public boolean exhausted;
    public int firstMethodId;
    /** How many method ids the class took from {@link #firstMethodId} on (0: none). */
    public int methodIdCount;
    /** The CRC-32 of the class file instrumented, when the class cache computed it; else 0. */
    public int originalCrc;
    public final List<String> warnings = new ArrayList<>();
}
