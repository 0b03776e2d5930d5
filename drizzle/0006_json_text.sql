-- JSON text exactly as the service's JavaScript would write it, for answers PostgreSQL builds whole
-- (src/db/json-text.ts, the GraphQL pass-through). Strings: to_json already escapes as JSON.stringify
-- does. Numbers: between 1e-4 and 1e15 PostgreSQL (≥ 12, extra_float_digits > 0) writes a double with the
-- same shortest round-trip digits as V8, in plain notation; outside it PostgreSQL writes an exponent where
-- JavaScript does only from 1e21 and below 1e-6, and not always the shortest digits:
-- oxs_js_number_from_exponent rewrites those.

-- The JavaScript form of a double PostgreSQL writes with an exponent. Its digits are not always the
-- shortest that read back (7e22 comes out as 7.0000000000000004e+22), so the shortest are searched:
-- PostgreSQL's digits rounded to 1, 2, … significant digits until one reads back as the same double. Rare
-- (only below 1e-4 and from 1e15), hence plpgsql rather than speed.
CREATE OR REPLACE FUNCTION oxs_js_number_from_exponent(v double precision) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  t text := abs(v)::text;
  m numeric := split_part(t, 'e', 1)::numeric;
  e int := split_part(t, 'e', 2)::int;
  r numeric;
  digits text;
  k int;
  n int;
BEGIN
  FOR p IN 1..17 LOOP
    r := round(m, p - 1);
    -- Rounding up near the largest double can leave the range (1.8e308): not a candidate.
    IF (r::text || 'e' || e)::numeric <= 1.7976931348623157e308 THEN
      EXIT WHEN (r::text || 'e' || e)::float8 = abs(v);
    END IF;
  END LOOP;
  IF r >= 10 THEN
    r := r / 10;
    e := e + 1;
  END IF;
  digits := rtrim(replace(r::text, '.', ''), '0');
  k := length(digits);
  n := e + 1;
  RETURN CASE WHEN v < 0 THEN '-' ELSE '' END || CASE
    WHEN n > 0 AND n <= 21 THEN CASE WHEN k <= n THEN digits || repeat('0', n - k) ELSE left(digits, n) || '.' || substr(digits, n + 1) END
    WHEN n > -6 AND n <= 0 THEN '0.' || repeat('0', -n) || digits
    ELSE left(digits, 1) || CASE WHEN k > 1 THEN '.' || substr(digits, 2) ELSE '' END
      || 'e' || CASE WHEN n - 1 >= 0 THEN '+' ELSE '-' END || abs(n - 1)::text
  END;
END
$$;
--> statement-breakpoint
-- A double as JavaScript's String(n) / JSON.stringify(n) writes it (0 for -0).
CREATE OR REPLACE FUNCTION oxs_js_number(v double precision) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE
    WHEN v = 0 THEN '0'
    WHEN strpos(v::text, 'e') = 0 THEN v::text
    ELSE oxs_js_number_from_exponent(v)
  END
$$;
