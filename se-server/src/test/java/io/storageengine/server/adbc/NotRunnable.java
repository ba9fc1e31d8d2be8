package io.storageengine.server.adbc;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Suite tests of a subclass that cannot pass against the engine, reported as disabled with
 * {@link #reason()}: for suite methods a subclass in another package cannot override (package
 * private), where {@code @Disabled} on an override is not possible.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(NotRunnable.Condition.class)
@interface NotRunnable {
  /** The suite's test method names. */
  String[] tests();

  String reason();

  /** Disables the listed tests of the annotated class. */
  final class Condition implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      NotRunnable listed = context.getRequiredTestClass().getAnnotation(NotRunnable.class);
      if (listed != null && context.getTestMethod().isPresent()
          && Arrays.asList(listed.tests()).contains(context.getTestMethod().get().getName())) {
        return ConditionEvaluationResult.disabled(listed.reason());
      }
      return ConditionEvaluationResult.enabled("runs");
    }
  }
}
