package mockbroker.ci.apicurio;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.List;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

/**
 * The bean Apicurio's configuration index extension would generate at build time: the list of
 * settings that may change while the registry runs.  That extension's build-time module is not
 * on Maven Central (see pom.xml), so the application supplies the bean itself, with no such
 * settings: every setting is read once at start-up, which is all a test registry needs.
 */
@ApplicationScoped
public class ConfigPropertyList {

    @Produces
    @ApplicationScoped
    public DynamicConfigPropertyList noDynamicSettings() {
        return new DynamicConfigPropertyList(List.of());
    }
}
