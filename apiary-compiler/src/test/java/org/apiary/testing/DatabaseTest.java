package org.apiary.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/** Marks a test class that runs against a real VoltDB; it runs once per database kind. */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("database")
@ExtendWith(TestDatabase.Resolver.class)
public @interface DatabaseTest {}
