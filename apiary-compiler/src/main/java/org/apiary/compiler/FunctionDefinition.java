package org.apiary.compiler;

import java.util.Objects;
import org.apiary.ApiaryFunction;

/**
 * A function to compile: the name it is registered and called under, and its class.
 *
 * @param name a Java identifier, unique within the application; it becomes the stored procedure's name
 * @param functionClass a public {@link org.apiary.LocalFunction} or {@link org.apiary.GlobalFunction} subclass with
 *     a public no-argument constructor
 */
public record FunctionDefinition(String name, Class<? extends ApiaryFunction> functionClass) {
  public FunctionDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(functionClass, "functionClass");
  }

  /** A definition; the same as the constructor, reads better at call sites. */
  public static FunctionDefinition of(String name, Class<? extends ApiaryFunction> functionClass) {
    return new FunctionDefinition(name, functionClass);
  }
}
