package org.dpdist.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;

/**
 * The test fixtures the device clients share, read from the repository (never downloaded): what Python computes
 * ({@code clients/js/test/fixtures/python.json}, written by {@code clients/js/test/make_fixture.py}) and the RFC test
 * vectors of Privacy Pass ({@code rfc9474.json}, {@code rfc9578.json}, read from the RFCs' sources).
 */
public final class Fixtures {
    private static Map<String, Object> python;

    private Fixtures() {
    }

    /** The repository's root: the first folder up from the working directory that holds clients/js/test/fixtures. */
    public static Path root() {
        for (Path at = Paths.get("").toAbsolutePath(); at != null; at = at.getParent()) {
            if (Files.isDirectory(at.resolve(Paths.get("clients", "js", "test", "fixtures")))) return at;
        }
        throw new IllegalStateException("run the tests inside the dpdist repository (no clients/js/test/fixtures above " + Paths.get("").toAbsolutePath() + ")");
    }

    /** The parsed JSON of fixture {@code name} (a file of clients/js/test/fixtures). */
    public static Object read(String name) {
        try {
            Path path = root().resolve(Paths.get("clients", "js", "test", "fixtures", name));
            return Json.parse(new String(Files.readAllBytes(path), StandardCharsets.UTF_8));
        } catch (IOException error) {
            throw new IllegalStateException(error);
        }
    }

    /** python.json: Python's configs, derived constants, channels, memos, priors, granularities, exp values. */
    public static synchronized Map<String, Object> python() {
        if (python == null) python = Json.asObject(read("python.json"));
        return python;
    }

    /** The entries of python.json's {@code key}. */
    @SuppressWarnings("unchecked")
    public static List<Map<String, Object>> entries(String key) {
        return (List<Map<String, Object>>) python().get(key);
    }
}
