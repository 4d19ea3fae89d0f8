package jbgui.runtime;

import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;


/**
 * Class and loader ids. The engine registers every class it sees at load time (by loader and
 * internal name, before the Class object exists); the runtime looks classes up by Class object
 * when it records a receiver or an exception type. Classes never seen at load time (hidden
 * classes such as lambda proxies, array classes) get an id the first time they are met, and a
 * short {@code seen_late} entry in static.xml.
 */
public final class ClassRegistry {
    private ClassRegistry() {}

    private static final class LoaderInfo {
        final int id;
        final Map<String, Integer> classes = new HashMap<>();

        LoaderInfo(int id) {
            this.id = id;
        }
    }

    private static final Object LOCK = new Object();
    private static final LoaderInfo BOOT = new LoaderInfo(0);
    // Weak keys: a program that discards class loaders must be able to unload them.
    private static final Map<ClassLoader, LoaderInfo> LOADERS = new WeakHashMap<>();
    private static int nextLoaderId = 1;
    private static int nextClassId = 1;

    // The method ids of classes whose Class objects live as long as the JVM (those of the boot,
    // platform and application loaders), by class id: where Tracer's table of the methods' own
    // classes is filled from (Tracer.ownerSeen). Other loaders' classes are left out, since that
    // table holds its classes strongly and a loader the program drops must be able to unload them.
    // Written under LOCK and published by the volatile write of the array; read without a lock.
    // Declared before the static block below, which loads classes (the transformer lists them here).
    private static volatile int[] methodRanges = new int[2 * 1024];

    private static LoaderInfo loader(ClassLoader loader) {
        if (loader == null) {
            return BOOT;
        }
        LoaderInfo info = LOADERS.get(loader);
        if (info == null) {
            info = new LoaderInfo(nextLoaderId++);
            LOADERS.put(loader, info);
            TraceSink.current().loaderSeen(info.id, describe(loader));
        }
        return info;
    }

    /** A readable name for a loader: bootstrap, platform, app, or its class and name. */
    public static String describe(ClassLoader loader) {
        if (loader == null) {
            return "bootstrap";
        }
        if (loader == ClassLoader.getPlatformClassLoader()) {
            return "platform";
        }
        if (loader == ClassLoader.getSystemClassLoader()) {
            return "app";
        }
        String name = loader.getName();
        return loader.getClass().getName() + (name == null ? "" : " " + name);
    }

    public static int loaderId(ClassLoader loader) {
        synchronized (LOCK) {
            return loader(loader).id;
        }
    }

    /**
     * The id of a class about to be defined (or already defined), assigning one if new. Returns
     * the existing id when the same loader defines the same name again (retransformation).
     */
    public static int register(ClassLoader loader, String internalName) {
        synchronized (LOCK) {
            LoaderInfo info = loader(loader);
            Integer id = info.classes.get(internalName);
            if (id != null) {
                return id;
            }
            int fresh = nextClassId++;
            info.classes.put(internalName, fresh);
            return fresh;
        }
    }

    /** Whether the loader already has an id for this name (so a fresh registration would not be new). */
    public static int lookup(ClassLoader loader, String internalName) {
        synchronized (LOCK) {
            Integer id = loader(loader).classes.get(internalName);
            return id == null ? 0 : id;
        }
    }

    /**
     * Ids of live classes, found without the lock. A ClassValue keeps the id in the class itself,
     * so a class loader the program drops can still be unloaded (a table of Class keys would pin
     * it). Only reached on a miss of the thread's own cache (ThreadTrace.classId), guarded.
     */
    private static final ClassValue<Integer> LIVE = new ClassValue<Integer>() {
        @Override
        protected Integer computeValue(Class<?> c) {
            return idOfSlow(c);
        }
    };

    static {
        // Load ClassValue's machinery now, while the engine starts, not in the program's time.
        new ClassValue<Integer>() {
            @Override
            protected Integer computeValue(Class<?> c) {
                return 0;
            }
        }.get(ClassRegistry.class);
    }

    /**
     * Whether classes of {@code loader} stay as long as the JVM (the boot, platform and
     * application loaders): only theirs may be held strongly by the probes' tables of the methods'
     * own classes ({@link #methods}, from jbgui.agent.Transformer) and usual receivers (Tracer.USUAL).
     * Call it guarded: the JDK methods it calls are traced code.
     */
    public static boolean neverUnloaded(ClassLoader loader) {
        return loader == null || loader == ClassLoader.getPlatformClassLoader() || loader == ClassLoader.getSystemClassLoader();
    }

    /** Whether class {@code c} lives as long as the JVM: {@link #neverUnloaded}'s loader, and not hidden (a hidden class can be unloaded on its own). */
    static boolean lasting(Class<?> c) {
        try {
            return !c.isHidden() && neverUnloaded(c.getClassLoader());
        } catch (RuntimeException | Error e) {
            return false; // the system loader is still being made, or a security manager said no
        }
    }

    /** The id of a live class; assigns one, and describes the class in static.xml, if it is new. */
    static int idOf(Class<?> c) {
        return LIVE.get(c);
    }

    private static int idOfSlow(Class<?> c) {
        String name = c.getName().replace('.', '/');
        ClassLoader loader = c.getClassLoader();
        int id;
        boolean fresh = false;
        synchronized (LOCK) {
            LoaderInfo info = loader(loader);
            Integer known = info.classes.get(name);
            if (known != null) {
                id = known;
            } else {
                id = nextClassId++;
                info.classes.put(name, id);
                fresh = true;
            }
        }
        if (fresh) {
            TraceSink.current().classSeenLate(id, name, loaderId(loader), describe(loader), c.isHidden(), c.isArray());
        }
        return id;
    }

    /** The class {@code classId} (of a loader that is never unloaded) has method ids {@code [first, first + count)}. */
    public static void methods(int classId, int first, int count) {
        if (classId <= 0 || first <= 0 || count <= 0) {
            return;
        }
        synchronized (LOCK) {
            int[] r = methodRanges;
            if (2 * classId + 1 >= r.length) {
                r = java.util.Arrays.copyOf(r, Math.max(2 * r.length, 2 * classId + 2));
            }
            r[2 * classId] = first;
            r[2 * classId + 1] = count;
            methodRanges = r;
        }
    }

    /** The first of the method ids that {@link #methods} gave the class, or 0; with {@link #methodCount}. */
    static int firstMethod(int classId) {
        int[] r = methodRanges;
        return classId > 0 && 2 * classId + 1 < r.length ? r[2 * classId] : 0;
    }

    static int methodCount(int classId) {
        int[] r = methodRanges;
        return 2 * classId + 1 < r.length ? r[2 * classId + 1] : 0;
    }

    public static int classCount() {
        synchronized (LOCK) {
            return nextClassId - 1;
        }
    }
}
