-- oxs_js_number (0006) without STRICT, so that PostgreSQL inlines it into the statements that call it
-- (the GraphQL pass-through writes every priceRange number and outstanding quantity through it). A STRICT
-- SQL function whose body (a CASE) is not itself strict is never inlined: each call ran the SQL-function
-- executor, 3.9 µs against 1.3 µs inlined (measured on 100,000 jsonb price slabs). The result is the same:
-- the callers already write a null as 'null' (coalesce), and a null input still gives null (the CASE falls
-- through to oxs_js_number_from_exponent, which is STRICT).
CREATE OR REPLACE FUNCTION oxs_js_number(v double precision) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN v = 0 THEN '0'
    WHEN strpos(v::text, 'e') = 0 THEN v::text
    ELSE oxs_js_number_from_exponent(v)
  END
$$;
