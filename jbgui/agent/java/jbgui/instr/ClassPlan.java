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
    public final Mode mode;
    public final String reason;

    /**
     * The opening {@code <class>} tag: the attributes from the class file ({@code classAttributes}),
     * then this run's (id, loader, module, …) and the instrumentation status.
     */
    public String openTag(String classAttributes, String status) {
        StringBuilder s = new StringBuilder(256);
        s.append("<class id=\"").append(classId).append('"').append(classAttributes);
        s.append(" loader_id=\"").append(loaderId).append("\" loader=\"").append(jbgui.output.Xml.attr(loader)).append('"');
        if (module != null) {
            s.append(" module=\"").append(jbgui.output.Xml.attr(module)).append('"');
        }
        s.append(" jdk=\"").append(jdk).append('"');
        if (preloaded) {
            s.append(" preloaded=\"true\"");
        }
        return s.append(status).append(">\n").toString();
    }

    public ClassPlan(int classId, String name, int loaderId, String loader, String module, boolean preloaded,
                     boolean jdk, Mode mode, String reason) {
        this.classId = classId;
        this.name = name;
        this.loaderId = loaderId;
        this.loader = loader;
        this.module = module;
        this.preloaded = preloaded;
        this.jdk = jdk;
        this.mode = mode;
        this.reason = reason;
    }
}
