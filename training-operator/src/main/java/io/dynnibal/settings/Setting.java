package io.dynnibal.settings;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares one job setting on the field that holds it: the field's name is the key in camel case
 * ({@code negativesPerQuery} is {@code negatives.per.query}), its type the setting's type, its
 * initial value the default; this annotation adds the description and the bounds. The job's
 * settings table reads every declaration, in every settings group, to parse, print, copy, check and
 * document the settings.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Setting {
  /** What the setting does, for the help text and the settings table. */
  String value();

  /** The key, where it is not the field's name (empty: the field's name in camel case). */
  String key() default "";

  /** The least allowed value of a number (inclusive unless {@link #aboveMin}). */
  double min() default Double.NEGATIVE_INFINITY;

  /** The greatest allowed value of a number (inclusive). */
  double max() default Double.POSITIVE_INFINITY;

  /** Whether the number must be strictly above {@link #min}. */
  boolean aboveMin() default false;

  /** A regular expression a text must match, e.g. a topic name's characters. */
  String pattern() default "";

  /** What {@link #pattern} allows, in words, for the error message. */
  String patternHint() default "";

  /** The text may not be empty. */
  boolean required() default false;
}
