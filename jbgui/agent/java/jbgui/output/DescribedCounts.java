package jbgui.output;

/**
 * trace.json's counts of described classes and method ids. Two threads may describe classes at
 * once: each reads the registry's total and the id space's use before it reports, so the reports
 * can arrive out of order. The counts are therefore the largest totals reported, never the last
 * (a last-writer count once wrote 1143 classes for a static.xml that defined 1144).
 */
final class DescribedCounts {
    private int classes;
    private int methods;
    private int instrumented;
    private int notInstrumented;
    private boolean idsExhausted;

    synchronized void described(int classCount, int methodIds, boolean wasInstrumented, boolean exhausted) {
        classes = Math.max(classes, classCount);
        methods = Math.max(methods, methodIds);
        if (wasInstrumented) {
            instrumented++;
        } else {
            notInstrumented++;
        }
        idsExhausted |= exhausted;
    }

    synchronized int classes() { return classes; }
    synchronized int methods() { return methods; }
    synchronized int instrumented() { return instrumented; }
    synchronized int notInstrumented() { return notInstrumented; }
    synchronized boolean idsExhausted() { return idsExhausted; }
}
