/** Realistic Indian B2B shapes for the demo: FMCG catalogue, kirana retailers, GST slabs. */

export const PRODUCTS: ReadonlyArray<{
  name: string, pricePaise: number, gst: number, cess: number, tags: string[]
}> = [
  { name: 'Tata Salt 1kg', pricePaise: 2800, gst: 0, cess: 0, tags: ['staples'] },
  { name: 'Aashirvaad Shudh Chakki Atta 10kg', pricePaise: 45500, gst: 5, cess: 0, tags: ['staples', 'flour'] },
  { name: 'Fortune Sunflower Oil 1L', pricePaise: 15500, gst: 5, cess: 0, tags: ['edible-oil'] },
  { name: 'Saffola Gold Oil 5L', pricePaise: 89900, gst: 5, cess: 0, tags: ['edible-oil'] },
  { name: 'Parle-G Biscuits 800g', pricePaise: 9000, gst: 18, cess: 0, tags: ['biscuits'] },
  { name: 'Britannia Good Day 600g', pricePaise: 12000, gst: 18, cess: 0, tags: ['biscuits'] },
  { name: 'Maggi 2-Minute Noodles 12-pack', pricePaise: 16800, gst: 18, cess: 0, tags: ['instant-food'] },
  { name: 'Amul Butter 500g', pricePaise: 28500, gst: 12, cess: 0, tags: ['dairy'] },
  { name: 'Amul Taaza Milk 1L (carton)', pricePaise: 7400, gst: 0, cess: 0, tags: ['dairy'] },
  { name: 'Surf Excel Easy Wash 1.5kg', pricePaise: 21000, gst: 18, cess: 0, tags: ['detergent'] },
  { name: 'Vim Dishwash Bar 300g', pricePaise: 3000, gst: 18, cess: 0, tags: ['cleaning'] },
  { name: 'Colgate Strong Teeth 200g', pricePaise: 11500, gst: 18, cess: 0, tags: ['personal-care'] },
  { name: 'Dettol Original Soap 4x125g', pricePaise: 22000, gst: 18, cess: 0, tags: ['personal-care'] },
  { name: 'Red Label Tea 1kg', pricePaise: 52000, gst: 5, cess: 0, tags: ['beverages'] },
  { name: 'Nescafe Classic 200g', pricePaise: 62000, gst: 18, cess: 0, tags: ['beverages'] },
  { name: 'Coca-Cola 2.25L', pricePaise: 9900, gst: 28, cess: 12, tags: ['beverages', 'aerated'] },
  { name: 'Thums Up 750ml x 24', pricePaise: 96000, gst: 28, cess: 12, tags: ['beverages', 'aerated'] },
  { name: 'India Gate Basmati Rice 5kg', pricePaise: 64500, gst: 5, cess: 0, tags: ['staples', 'rice'] },
  { name: 'Toor Dal 1kg', pricePaise: 16500, gst: 0, cess: 0, tags: ['staples', 'pulses'] },
  { name: 'MDH Garam Masala 100g', pricePaise: 8900, gst: 5, cess: 0, tags: ['spices'] },
  { name: 'Everest Turmeric Powder 500g', pricePaise: 14200, gst: 5, cess: 0, tags: ['spices'] },
  { name: 'Haldiram Aloo Bhujia 1kg', pricePaise: 26000, gst: 12, cess: 0, tags: ['snacks'] },
  { name: "Lay's Classic Salted 52g x 30", pricePaise: 60000, gst: 12, cess: 0, tags: ['snacks'] },
  { name: 'Kissan Tomato Ketchup 1kg', pricePaise: 15000, gst: 12, cess: 0, tags: ['condiments'] },
  { name: 'Patanjali Cow Ghee 1L', pricePaise: 65500, gst: 12, cess: 0, tags: ['dairy', 'ghee'] },
  { name: 'Madhur Sugar 5kg', pricePaise: 26500, gst: 5, cess: 0, tags: ['staples'] },
  { name: 'Harpic Power Plus 1L', pricePaise: 21500, gst: 18, cess: 0, tags: ['cleaning'] },
  { name: 'Lizol Floor Cleaner 2L', pricePaise: 39900, gst: 18, cess: 0, tags: ['cleaning'] },
  { name: 'Clinic Plus Shampoo 650ml', pricePaise: 38000, gst: 18, cess: 0, tags: ['personal-care'] },
  { name: 'Bournvita 1kg', pricePaise: 44000, gst: 18, cess: 0, tags: ['beverages', 'health-drink'] }
]

export const FIRST_NAMES = ['Ramesh', 'Suresh', 'Anita', 'Priya', 'Vikram', 'Sunita', 'Rajesh', 'Kavita', 'Amit', 'Neha',
  'Manoj', 'Pooja', 'Sanjay', 'Deepa', 'Arjun', 'Meena', 'Harish', 'Lakshmi', 'Imran', 'Farah', 'Gurpreet', 'Jaspreet']
export const LAST_NAMES = ['Sharma', 'Verma', 'Patel', 'Reddy', 'Iyer', 'Gupta', 'Singh', 'Khan', 'Nair', 'Das',
  'Joshi', 'Mehta', 'Agarwal', 'Kulkarni', 'Chatterjee', 'Pillai']
export const SHOP_WORDS = ['Kirana Store', 'General Store', 'Super Mart', 'Provision Stores', 'Traders', 'Mini Mart', 'Departmental Store']
export const LOCALITIES = ['Andheri', 'Koramangala', 'Salt Lake', 'Banjara Hills', 'Karol Bagh', 'T. Nagar', 'Aundh',
  'Navrangpura', 'Gomti Nagar', 'Malviya Nagar', 'Vashi', 'Indiranagar']
