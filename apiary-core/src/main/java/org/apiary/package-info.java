/**
 * The Apiary SDK: what application code is written against.
 *
 * <p>{@link org.apiary.LocalFunction} and {@link org.apiary.GlobalFunction} are the two kinds of function;
 * {@link org.apiary.Statement} declares their SQL; {@link org.apiary.QueryResult} and {@link org.apiary.Row} are
 * what SQL returns; {@link org.apiary.ApiaryException} is the root of every error. Nothing here exposes VoltDB.
 * Packages named {@code internal} are Apiary's own and may change without notice.
 */
package org.apiary;
