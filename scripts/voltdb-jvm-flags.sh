# The JVM flags VoltDB (server and client) needs on Java 17, for the shell launchers; sourced, not run.
# VoltDB installs Felix's URL handler factory JVM-wide; without the last two, new URL("http://...") fails with
# "unknown protocol" in any process that embeds VoltDB (an external step calling HTTP, say).
# The same list is the Maven property voltdb.jvm.flags (tests) and LocalCluster.VOLTDB_JVM_FLAGS (server processes).
voltdb_jvm_flags=(--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
                  --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
                  --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.net=ALL-UNNAMED
                  --add-opens java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
                  --add-opens java.base/sun.net.www.protocol.http=ALL-UNNAMED
                  --add-opens java.base/sun.net.www.protocol.https=ALL-UNNAMED)
