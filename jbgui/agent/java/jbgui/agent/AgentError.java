package jbgui.agent;

/** A problem the user must fix (bad options, unwritable directory): printed, then the JVM stops. */
public final class AgentError extends RuntimeException {
    public AgentError(String message) {
        super(message);
    }
}
