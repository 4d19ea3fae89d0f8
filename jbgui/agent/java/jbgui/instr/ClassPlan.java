package jbgui.instr;

/** What the transformer decided for one class, and the facts about it the XML records. */
public final class ClassPlan {
    public enum Mode {
        /** Insert the probes. */
        TRACE,
        /** Leave the code as it is, describe the class and its methods (filtered, JDK off, agent). */
        DESCRIBE,
        /** The agent's own entry (InstrumentationImpl.transform): guard it, record nothing. */
        HOOK
    }

    public final int classId;
    public final String name;
    public final int loaderId;
    public final String loader;
    public final String module;
    public final boolean preloaded;
    public final boolean jdk;
    /**
     * The class file was read from the disk (a jar or a class directory: its code source is a
     * {@code file:} location), so the same bytes come again in the next run and its instrumentation
     * is worth keeping ({@link ClassCache}); false for classes a program generates as it runs.
     */
    public final boolean fromFile;
    public final Mode mode;
    public final String reason;

    /** The opening {@code <class>} tag of this class (written by {@link jbgui.output.ClassElement}). */
    public String openTag(String classFileAttributes, String status) {
        return jbgui.output.ClassElement.open(classId, classFileAttributes, loaderId, loader, module, jdk, preloaded, status);
    }

    public ClassPlan(int classId, String name, int loaderId, String loader, String module, boolean preloaded,
                     boolean jdk, boolean fromFile, Mode mode, String reason) {
        this.classId = classId;
        this.name = name;
        this.loaderId = loaderId;
        this.loader = loader;
        this.module = module;
        this.preloaded = preloaded;
        this.jdk = jdk;
        this.fromFile = fromFile;
        this.mode = mode;
        this.reason = reason;
    }
}
